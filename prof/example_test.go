package prof_test

import (
	"fmt"
	"log"
	"os"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/prof"
	"github.com/gocu-dev/gocu/sim"
)

// Profile two simulated kernels, then print the summary (p.Table() prints
// it with times) and write a trace for Perfetto.
func Example() {
	if err := prof.Start(); err != nil {
		log.Fatal(err)
	}
	const n = 1 << 12
	rgb, gray := make([]uint8, 3*n), make([]uint8, n)
	cfg := sim.Config{Grid: kernel.Dim3{X: n / 256}, Block: kernel.Dim3{X: 256}}
	for range 3 {
		k := sim.Kernel{Name: "Gray", Func: func(t *kernel.Thread) { lecture.Gray(t, rgb, gray, n) }}
		if err := sim.Launch(cfg, k); err != nil {
			log.Fatal(err)
		}
	}
	a, b, c := make([]float32, 64*64), make([]float32, 64*64), make([]float32, 64*64)
	mm := sim.Config{Grid: kernel.Dim3{X: 4, Y: 4}, Block: kernel.Dim3{X: 16, Y: 16}}
	k := sim.Kernel{Name: "TiledMatMul", Func: func(t *kernel.Thread) { lecture.TiledMatMul(t, a, b, c, 64, 64, 64) }}
	if err := sim.Launch(mm, k); err != nil {
		log.Fatal(err)
	}

	p, err := prof.Stop()
	if err != nil {
		log.Fatal(err)
	}
	calls := map[string]int{}
	for _, r := range p.Summary() {
		calls[r.Name] = r.Calls
	}
	fmt.Println("Gray:", calls["Gray"], "calls; TiledMatMul:", calls["TiledMatMul"], "call")
	trace, err := os.CreateTemp("", "trace-*.json")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(trace.Name())
	if err := p.WriteTrace(trace); err != nil {
		log.Fatal(err)
	}
	trace.Close()
	// Output: Gray: 3 calls; TiledMatMul: 1 call
}

// A program profiled with GOCU_PROFILE=out.json completes the file on its
// way out.
func ExampleFlush() {
	defer prof.Flush() // does nothing unless GOCU_PROFILE is set
	// ... the program's work ...
}
