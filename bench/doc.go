// Package bench is gocu's benchmark: a registry of workloads (copies,
// launch overhead, graph replay, NVRTC, the lecture's kernels, cuBLAS; the
// Go kernels on the simulator) and the runner behind "gocu bench".
//
// For every workload the runner checks the output of a first run against a
// CPU reference (random inputs, outputs poisoned beforehand; a wrong result
// fails the run), warms up, then times N repetitions (CUDA events on the
// GPU, as the peers' numbers in ../shared/anchors/baseline.py are taken)
// and reports the median, the rate in GB/s or TFLOP/s, the arithmetic
// intensity and the share of the ceiling: the device's own copy bandwidth
// and FP32/TF32 matmul rates, measured first in the same run. A Report
// prints as a table, writes as JSON (schema "gocu-bench/1"), compares with
// a saved report or with the anchors' baseline.json, and draws a roofline
// (PNG or SVG, gonum/plot).
//
// Other packages add workloads from an init function with Register; the
// array and gen workloads plug in that way:
//
//	bench.Register(bench.Workload{
//		Name: "add", Doc: "c = a + b, 2^26 float32", Kind: bench.Bandwidth, Devices: bench.CUDA | bench.CPU,
//		Peers: []bench.Peer{{Name: "torch", Key: "vadd_64M_torch_ms", Metric: bench.Millis}},
//		Setup: func(e *bench.Env) (*bench.Case, error) {
//			// allocate on e.Dev (nil on the CPU), fill from e.Rand, poison the output
//			return &bench.Case{Run: run, Check: check, Close: free, Bytes: 12 << 26}, nil
//		},
//	})
//
// The package that registers must be linked into the gocu command (a blank
// import in cmd/gocu/bench.go).
package bench
