package gpu

import "github.com/gocu-dev/gocu/cuda"

// maxFastArgs is the most kernel arguments launch passes without
// allocating. Generated kernels take only 8-byte parameters (pointers,
// long long, unsigned long long, double), so every argument travels as a
// uint64 holding its bits, which is what the driver copies.
const maxFastArgs = 32

// launch queues fn with the arguments' bits. Function.Launch takes
// ...any; boxing into a fixed local array that does not escape (each
// assignment written out, so that no boxed value outlives a loop
// iteration) keeps the values on the stack: a launch allocates nothing.
func launch(fn *cuda.Function, cfg *cuda.Config, v []uint64) error {
	n := len(v)
	if n > maxFastArgs {
		a := make([]any, n)
		for i, x := range v {
			a[i] = x
		}
		return fn.Launch(*cfg, a...)
	}
	var w [maxFastArgs]uint64
	copy(w[:], v)
	var a [maxFastArgs]any
	a[0] = w[0]
	a[1] = w[1]
	a[2] = w[2]
	a[3] = w[3]
	a[4] = w[4]
	a[5] = w[5]
	a[6] = w[6]
	a[7] = w[7]
	a[8] = w[8]
	a[9] = w[9]
	a[10] = w[10]
	a[11] = w[11]
	a[12] = w[12]
	a[13] = w[13]
	a[14] = w[14]
	a[15] = w[15]
	a[16] = w[16]
	a[17] = w[17]
	a[18] = w[18]
	a[19] = w[19]
	a[20] = w[20]
	a[21] = w[21]
	a[22] = w[22]
	a[23] = w[23]
	a[24] = w[24]
	a[25] = w[25]
	a[26] = w[26]
	a[27] = w[27]
	a[28] = w[28]
	a[29] = w[29]
	a[30] = w[30]
	a[31] = w[31]
	return fn.Launch(*cfg, a[:n]...)
}
