// Package bench is gocu's benchmark: a registry of workloads and the
// runner behind "gocu bench". The workloads match bench/anchors/baseline.py
// (in the repository), which measures torch and CuPy on the same sizes:
//
//   - ceilings (measured first): device-to-device copy, cuBLAS SGEMM FP32
//     and TF32 on the GPU; a Go copy and an SGEMM in Go on the CPU;
//   - runtime: launch overhead, CUDA graph replay, host transfers, NVRTC
//     compile and cache load;
//   - lecture: the lecture's grayscale, naive and tiled matmul in CUDA C;
//   - go: kernels written in Go (internal/lecture) through their
//     generated launchers: the lecture's Gray, MatMul and TiledMatMul
//     (gray_go, matmul_naive_go, matmul_tiled_go), GrayFast and the
//     register-tiled SGEMM (gray_fast, sgemm_go), and on the tensor cores
//     the bf16 GEMM and flash attention (gemm_bf16_go, flash_attn_go,
//     flash_attn_causal_go), whose peers are baseline_lowp.py's (cuBLAS
//     and torch's SDPA flash backend: compare with baseline_lowp.json);
//   - arrays: package array's add, sum, fused and unfused elementwise
//     chain, matmul (FP32, TF32) and the cost of a tiny operation, on its
//     GPU backend and, at smaller sizes, on its CPU backend;
//   - on the simulator, the lecture's Go kernels.
//
// For every workload the runner checks the output of a first run against a
// CPU reference (random inputs, outputs poisoned beforehand; a wrong result
// fails the run), warms up, then times N repetitions (CUDA events on the
// GPU, as the peers' numbers are taken, recorded on the stream the work is
// queued on: the default stream, or the array device's own) and reports
// the median, the rate in GB/s or TFLOP/s, the arithmetic intensity and
// the share of the ceiling at that intensity. A Report prints as a table
// grouped as above, writes as JSON (schema "gocu-bench/1"), compares with a
// saved report or with the anchors' baseline.json, and draws a roofline
// (PNG or SVG, gonum/plot) with one labelled point per workload.
//
// Other packages add workloads from an init function with Register:
//
//	bench.Register(bench.Workload{
//		Name: "axpy", Doc: "y = a x + y, 2^26 float32", Kind: bench.Bandwidth, Devices: bench.CUDA,
//		Suites: []string{"mine"},
//		Setup: func(e *bench.Env) (*bench.Case, error) {
//			// allocate on e.Dev, fill from e.Rand, poison the output
//			return &bench.Case{Run: run, Check: check, Close: free, Bytes: 12 << 26, Flops: 2 << 26}, nil
//		},
//	})
//
// Run queues its GPU work on e.Stream, or on a stream of its own named in
// Case.Stream so that the events are recorded there. The package that
// registers must be linked into the gocu command (a blank import in
// cmd/gocu/bench.go).
package bench
