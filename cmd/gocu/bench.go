package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/bench"
	"github.com/gocu-dev/gocu/internal/units"
)

// Packages that register benchmark workloads (bench.Register) are linked
// here; package bench registers the runtime, lecture and simulator ones.

type benchFlags struct {
	device  string
	only    []string
	suite   string
	reps    int
	json    string
	plot    string
	compare string
	small   bool
	list    bool
	seed    uint64
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure kernels, copies and launches against the device's own measured ceilings",
		Long: `gocu bench measures the device's ceilings first (copy bandwidth, FP32 and
TF32 matmul rate with cuBLAS SGEMM 4096^3 on a GPU; a Go copy and package
array's SGEMM on the CPU, gonum's on the simulator), then each workload: it checks the output of a first run
against a CPU reference (a wrong result fails the run), warms up, and times
N repetitions with CUDA events. It prints the median time, GB/s or TFLOP/s,
the arithmetic intensity and the share of the ceiling at that intensity
(the roofline), and optionally writes JSON, draws the roofline, and
compares with a saved run or with the baseline.json that
bench/anchors/baseline.py writes (torch and CuPy on the same workloads,
measured on the same GPU: ratios above 1x mean gocu is faster).

Workloads on the GPU, by suite (--suite):
  ceilings  copy, sgemm_fp32, sgemm_tf32 (cuBLAS), measured first
  runtime   launch (us per launch of 10,000), graph (us per kernel of a
            replayed CUDA graph), h2d_pageable, h2d_pinned, d2h_pinned
            (256 MiB), nvrtc_cold, nvrtc_warm (ms)
  lecture   gray, matmul_naive, matmul_tiled (CUDA C, 4096x4096 and 4096^3)
  go        kernels written in Go through their generated launchers: gray_go,
            matmul_naive_go, matmul_tiled_go (the lecture's), gray_fast,
            sgemm_go (register-tiled SGEMM); on the tensor cores
            gemm_bf16_go (4096^3), flash_attn_go and flash_attn_causal_go
            (B=4 H=16 S=4096 D=128), whose peers are baseline_lowp.py's:
            compare with its JSON
  arrays    package array on its GPU backend: add, sum, chain_fused,
            chain_unfused (2^26 float32), matmul_array_fp32/tf32 (4096^3),
            array_op_overhead and array_op_overhead_into (us per tiny
            op, a new result or one written by BinaryInto)
  training  the MLP 784-512-512-10 with Adam (packages grad and nn):
            mlp_step_b64/b1024 eager and replayed as a CUDA graph (us per
            step), mlp_epoch_b64 (60,000 samples); compare with
            train_mlp.py's JSON
  lowp      low precision (baseline_lowp.py's peers): matmul_bf16,
            matmul_fp16, matmul_int8 (w row-major, as torch._int_mm),
            matmul_int8_tn, matmul_fp8 (ScaledMatMul) at 4096^3;
            quantize_rows, softmax_rows (8192^2 float32); add_bf16 (2^26).
            Their tensor-core ceilings (ceil_bf16, ceil_fp16, ceil_int8,
            ceil_fp8: library GEMMs at 8192^3) are measured first, only
            when a workload compared with them runs.
  linalg    package array/linalg on cuSOLVER and cuBLAS (the peers are
            CuPy's: compare with baseline_numpy.py's JSON):
            linalg_solve_f32/f64 (4096^2, 64 right-hand sides),
            linalg_inv/cholesky/qr/det_f32 (4096^2), linalg_svd_f32
            (1024^2, Jacobi) and linalg_svd_gesvd_f32 (QR iteration,
            CuPy's), linalg_eigh_f32 (2048^2), linalg_solve_batched
            (4096 of 32^2), linalg_einsum_attn (bhqd,bhkd->bhqk, 4x16x1024x64);
            package array/fft on cuFFT and complex arrays: fft_c64, rfft_f32
            (2^24), fft2_c64, fft_batched_c64 (4096^2), complex_mul_abs_c64
            (2^24, one fused kernel), matmul_c64 (4096^3)
  gpt       training steps of package gpt (bf16 products, AdamW, clip 1;
            compare with tools/gpu/train_gpt_peer.py's train_gpt.json):
            gpt_bytes_step_eager/graph (6 layers, 384 wide, batch 64,
            context 256), gpt2_step_eager/graph (GPT-2 124M, batch 16,
            context 1024), with the peak of device memory in use
On the CPU (--device cpu): the arrays on their CPU backend (2^24 float32,
1024^3), and the lowp suite at 1024^3, 2048^2 and 2^24. On the simulator:
the lecture's Go kernels. --list shows them all.`,
		Example: `  gocu bench
  OUT=. python3 bench/anchors/baseline.py && gocu bench --compare baseline.json
  gocu bench --only gray,matmul_tiled -n 50 --json h100.json --plot roofline.png
  gocu bench --suite arrays --device cpu
  OUT=. python3 bench/anchors/train_mlp.py && gocu bench --suite training --compare train_mlp.json
  OUT=. python3 bench/anchors/baseline_lowp.py && gocu bench --suite lowp --compare baseline_lowp.json
  gocu bench --suite linalg --compare baseline_numpy.json
  gocu bench --only gemm_bf16_go,flash_attn_go,flash_attn_causal_go --compare baseline_lowp.json
  gocu bench --device sim --plot sim.svg
  gocu bench --compare yesterday.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.device, "device", "", "cuda, cpu or sim (default: cuda when a GPU is present, else cpu; on cpu the arrays run on the CPU backend, on sim the lecture's Go kernels on the simulator)")
	fl.StringSliceVar(&f.only, "only", nil, "run only these workloads (comma-separated)")
	fl.StringVar(&f.suite, "suite", "all", "run one suite: all, runtime (launches, graph replay, host copies, NVRTC), lecture, go (kernels written in Go), arrays, lowp (low precision), numpy (sorting, scans, statistics, indexing), training, linalg, gpt")
	fl.IntVarP(&f.reps, "reps", "n", 0, "timed repetitions per workload (default: each workload's own, 20 for most)")
	fl.StringVar(&f.json, "json", "", "write the results as JSON to `FILE`")
	fl.StringVar(&f.plot, "plot", "", "draw the roofline into `FILE`.png or FILE.svg")
	fl.StringVar(&f.compare, "compare", "", "compare with a saved --json `FILE`, or with the baseline.json of bench/anchors/baseline.py")
	fl.BoolVar(&f.small, "small", false, "small sizes: a quick check that everything runs (not comparable)")
	fl.BoolVar(&f.list, "list", false, "list the workloads and exit")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the random inputs (default: random)")
	return cmd
}

func runBench(cmd *cobra.Command, f *benchFlags) error {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.reps < 0 {
		return fmt.Errorf("--reps %d: want a number of timed repetitions >= 1 (0: each workload's own)", f.reps)
	}
	dev, err := benchDevice(f.device, errw)
	if err != nil {
		return err
	}
	if f.list {
		return listWorkloads(out, dev)
	}
	// Fail on bad output paths before measuring for minutes.
	for _, p := range []string{f.json, f.plot} {
		if p != "" {
			if err := writable(p); err != nil {
				return err
			}
		}
	}
	if f.plot != "" && !strings.HasSuffix(strings.ToLower(f.plot), ".png") && !strings.HasSuffix(strings.ToLower(f.plot), ".svg") {
		return fmt.Errorf("--plot %s: the file must end in .png or .svg", f.plot)
	}
	if f.compare != "" {
		if _, err := os.Stat(f.compare); err != nil {
			return fmt.Errorf("--compare: %w", err)
		}
	}
	rep, runErr := bench.Run(bench.Options{Device: dev, Only: f.only, Suite: f.suite, Reps: f.reps, Small: f.small,
		Seed: f.seed, Progress: bench.NewProgress(errw)})
	if rep == nil {
		return runErr
	}
	if f.compare != "" {
		if err := rep.Compare(f.compare); err != nil {
			return err
		}
	}
	if err := rep.WriteTable(out); err != nil {
		return err
	}
	if f.json != "" {
		if err := rep.WriteJSONFile(f.json); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", f.json)
	}
	if f.plot != "" {
		if err := rep.PlotFile(f.plot); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", f.plot)
	}
	return runErr
}

// benchDevice parses --device; with none, it takes the GPU when there is
// one and says so when there is not.
func benchDevice(name string, errw io.Writer) (bench.Device, error) {
	if name != "" {
		return bench.ParseDevice(name)
	}
	if cuda.Available() {
		return bench.CUDA, nil
	}
	reason := "no CUDA driver"
	if err := cuda.Init(); err != nil {
		reason = units.OneLine(err)
	}
	fmt.Fprintf(errw, "no GPU: %s; benchmarking cpu (--device sim for the Go kernels on the simulator)\n", reason)
	return bench.CPU, nil
}

func listWorkloads(w io.Writer, d bench.Device) error {
	fmt.Fprintf(w, "workloads on %v (suites: %s):\n", d, strings.Join(bench.Suites(d), ", "))
	for _, x := range bench.Workloads(d) {
		tags := append([]string{x.Kind.String()}, x.Suites...)
		if x.Ceiling != bench.NoCeiling {
			tags = append(tags, "ceiling")
		}
		fmt.Fprintf(w, "  %-18s %s [%s]\n", x.Name, x.Doc, strings.Join(tags, ", "))
	}
	return nil
}

// writable checks that path can be created, without leaving it behind
// when it did not exist.
func writable(path string) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	if errors.Is(statErr, os.ErrNotExist) {
		os.Remove(path)
	}
	return nil
}
