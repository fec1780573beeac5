package bench_test

import (
	"fmt"
	"log"
	"os"

	"github.com/gocu-dev/gocu/internal/bench"
)

// Benchmark the lecture's Go kernels on the simulator at small sizes and
// print what ran; rep.WriteTable prints the figures, rep.PlotFile draws the
// roofline.
func ExampleRun() {
	rep, err := bench.Run(bench.Options{Device: bench.Sim, Suite: "lecture", Small: true, Reps: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rep.Results {
		fmt.Println(r.Name, r.Error == "" && r.Seconds > 0)
	}
	fmt.Println("ceilings measured:", rep.Ceilings.MemoryGBps > 0 && rep.Ceilings.FP32TFLOPs > 0)
	// Output:
	// gray true
	// matmul_tiled_64 true
	// matmul_tiled_256 true
	// ceilings measured: true
}

// A package adds its workloads from an init function; gocu bench runs them
// once the package is linked into the command.
func ExampleRegister() {
	bench.Register(bench.Workload{
		Name: "example_fill", Doc: "fill 1 MiB with a Go loop", Kind: bench.Bandwidth, Devices: bench.CPU,
		Setup: func(e *bench.Env) (*bench.Case, error) {
			x := make([]byte, 1<<20)
			return &bench.Case{
				Run: func() error {
					for i := range x {
						x[i] = 7
					}
					return nil
				},
				Check: func() error {
					for i, v := range x {
						if v != 7 {
							return fmt.Errorf("x[%d] = %d", i, v)
						}
					}
					return nil
				},
				Bytes: 1 << 20,
			}, nil
		},
	})
	rep, err := bench.Run(bench.Options{Device: bench.CPU, Only: []string{"example_fill"}, Reps: 3})
	if err != nil {
		log.Fatal(err)
	}
	rep.WriteTable(os.Stdout)
}
