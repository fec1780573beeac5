//go:build gocu_fakedriver

package array

import "testing"

// TestSortScanFakeGPU runs every sort, scan, search and counting request
// through the GPU backend's host side on the fake driver (kernels do
// nothing, so only errors are checked): argument counts, scratch buffers
// and launch sequences.
func TestSortScanFakeGPU(t *testing.T) {
	d := fakeGPU(t)
	for _, dt := range []DType{Bool, Uint8, Int32, Int64, Float32, Float64, Int8, Int16, Uint16, Uint32, Uint64} {
		x := d.Ones(dt, 300, 70).Eval()
		for _, a := range []*Array{x.Sort(-1), x.Argsort(0), x.Cumsum(0), x.Cumsum(1), x.Cummax(1), x.Cumprod(0),
			x.Median(), x.Var(1, 0), ssBincountIfInt(x.Reshape(-1)), SearchSorted(x.Reshape(-1), x, true),
			SortBy(x, x.AsType(Float64), 1), x.Cumsum(1).Cummin(0), x.NanQuantile(0.3, 1)} {
			if err := a.Err(); err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			a.Close()
		}
		v, i := x.TopK(5, true)
		long := d.Ones(dt, 1, 70000)
		lv, li := long.TopK(9, false) // a long row: two launches
		if err := li.Err(); err != nil {
			t.Fatalf("%v: long TopK: %v", dt, err)
		}
		closeAll(long, lv, li)
		_, _, _, _, c := x.UniqueN(10, 0)
		h, e := x.Histogram(16, 0, 1)
		for _, a := range []*Array{v, i, c, h, e} {
			if err := a.Err(); err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
		}
		x.Close()
	}
}

// ssBincountIfInt is BincountN for integer arrays and a copy otherwise.
func ssBincountIfInt(a *Array) *Array {
	if a.dt.IsInt() || a.dt == Bool {
		return a.BincountN(nil, 8)
	}
	return a.Copy()
}

// TestWideIntFakeGPU runs the new integer dtypes' elementwise operations,
// casts, reductions, matmul and scatters through the GPU backend's host side.
func TestWideIntFakeGPU(t *testing.T) {
	d := fakeGPU(t)
	for _, dt := range []DType{Int16, Uint16, Uint32, Uint64} {
		x := d.Ones(dt, 30, 7).Eval()
		y := d.Full(dt, 3, 30, 7).Eval()
		ix := d.Zeros(Int64, 30, 2)
		for _, a := range []*Array{x.Add(y), x.FloorDiv(y), x.Mod(y), x.RightShift(y), x.LeftShift(1), x.Maximum(y), x.Lt(y),
			x.Gt(-1), x.Sign(), x.Abs(), x.BitwiseNot(), x.Div(y), x.Sqrt(), x.AsType(Float32), x.AsType(Float64), x.AsType(Int8),
			d.Full(Float64, 1e30, 3).AsType(dt), x.Sum(), x.Max(1), x.ArgMin(0), x.Mean(), x.Prod(0), x.MatMul(y.T()),
			x.ScatterAdd(1, ix, y), x.IndexAdd(0, d.Zeros(Int64, 2), y.Slice(S(0, 2))), x.Take(ix, 1), Where(x.Gt(0), x, y)} {
			if err := a.Err(); err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			a.Close()
		}
		closeAll(x, y, ix)
	}
}
