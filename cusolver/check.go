package cusolver

// Argument checks done before cuSOLVER sees a call, so that a mistake gives
// a message naming the argument instead of CUSOLVER_STATUS_INVALID_VALUE,
// and a null device pointer never reaches the GPU.

func checkType(fn string, dt DType) error {
	if !dt.valid() {
		return invalid(fn, "dtype %v: only Float32 and Float64 are bound", dt)
	}
	return nil
}

// checkDims rejects negative or over-large dimensions; names has one
// letter per value.
func checkDims(fn, names string, vals ...int) error {
	for i, v := range vals {
		if !fitsInt32(v) {
			return invalid(fn, "%c = %d is negative or exceeds the int32 range", names[i], v)
		}
	}
	return nil
}

// checkLd checks a leading dimension against the rows of the matrix.
func checkLd(fn, name string, ld, rows int) error {
	if ld < max(1, rows) || !fitsInt32(ld) {
		return invalid(fn, "%s = %d, must be at least max(1, %d), the rows of the matrix", name, ld, rows)
	}
	return nil
}

// checkPtrs rejects null device pointers when the call has work to do.
func checkPtrs(fn string, work bool, names string, ptrs ...uint64) error {
	if !work {
		return nil
	}
	for i, p := range ptrs {
		if p == 0 {
			return invalid(fn, "%s is a null device pointer", field(names, i))
		}
	}
	return nil
}

// field returns the i-th comma-separated name.
func field(names string, i int) string {
	start := 0
	for j := 0; j <= len(names); j++ {
		if j == len(names) || names[j] == ',' {
			if i == 0 {
				return names[start:j]
			}
			i--
			start = j + 1
		}
	}
	return "pointer"
}

func checkWork(fn string, lwork int) error {
	if !fitsInt32(lwork) {
		return invalid(fn, "lwork = %d is negative or exceeds the int32 range", lwork)
	}
	return nil
}

func checkBatch(fn string, batch int) error {
	if batch < 1 || !fitsInt32(batch) {
		return invalid(fn, "batchSize = %d, must be at least 1", batch)
	}
	return nil
}

func checkFill(fn string, f Fill) error {
	if f != Lower && f != Upper {
		return invalid(fn, "uplo = %v is not Lower or Upper", f)
	}
	return nil
}

func checkMode(fn string, m EigMode) error {
	if m != NoVectors && m != Vectors {
		return invalid(fn, "jobz = %d is not NoVectors or Vectors", int32(m))
	}
	return nil
}
