package main

import (
	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo"
)

func newDemoCmd() *cobra.Command {
	var o demo.Options
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the CUDA-mode lecture end to end: grayscale, three matmuls, bugs caught",
		Long: `gocu demo runs CUDA-mode lectures 3 and 5 on the default device: the GPU if
there is one, else the CPU simulator for the kernels written in Go (and
all CPU cores for arrays). It converts the bundled sample image to
grayscale with the lecture's 1-D and 2-D kernels and writes the result,
then multiplies two random matrices with the naive kernel, the tiled kernel
(16x16 tiles in shared memory) and the array library (cuBLAS on the same
GPU, or all CPU cores). The kernels run through the typed launchers gocu
gen wrote (kernels.LaunchGray and the others): on a GPU their CUDA C++
translation, compiled by NVRTC on first use and cached on disk. Every step
is checked against a CPU reference and timed; a table says what ran where
and how long it took. Then the simulator runs three kernels with planted
bugs and prints its reports: a shared-memory race (the tiled matmul
without its second SyncThreads) and an out-of-range index (a guard off by
one), both in checked mode, and a divergent barrier. On a GPU the
off-by-one kernel then runs there in debug mode (gocu.Config{Debug: true}:
Go's bounds checks compiled into the CUDA C++), which must report the
index with the simulator's message, and once more without it, when the GPU
reports nothing.

Times: on a GPU, the mean of 100 (grayscale) or 10 (matmul) launches
between CUDA events after a warm-up; on the simulator one run, wall clock;
arrays the median of 3 (CPU) or 10 (GPU) after a warm-up. The simulator's
times measure the simulator, not a GPU: its tiled matmul is slower than the
naive one because its threads really meet at every barrier.

The image goes to gocu-gray.png in the OS's temporary directory unless -o
names a file (.png or .jpg), so that running the demo in a checkout leaves
nothing behind. Matrices are 256^3 on the simulator and 4096^3 on a GPU
unless --size says otherwise.`,
		Example: `  gocu demo
  gocu demo --device sim -o gray.png
  gocu demo --device cuda --size 8192
  GOCU_DEVICE=sim gocu demo --size 128`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := demo.Run(o, cmd.OutOrStdout())
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Device, "device", "auto", "auto, cpu, sim, cuda or cuda:N (auto: the GPU if there is one, else cpu; gocu devices says what cpu and sim are; $GOCU_DEVICE overrides auto)")
	fl.IntVar(&o.Size, "size", 0, "matrix size `N` of the N^3 products (default 256 on the simulator, 4096 on a GPU)")
	fl.StringVarP(&o.Out, "out", "o", "", "write the grayscale image to `FILE` (.png, .jpg) (default $TMPDIR/gocu-gray.png)")
	fl.Uint64Var(&o.Seed, "seed", 0, "seed of the random matrices and of the simulator's schedule (default: random)")
	return cmd
}
