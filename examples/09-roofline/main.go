// Command 09-roofline measures the lecture's kernels with package bench,
// which gocu bench runs, and draws the roofline: how close each kernel
// comes to what the device can do at its arithmetic intensity.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/bench"
	"github.com/gocu-dev/gocu/internal/units"
)

func main() {
	// What gocu bench --device sim --small runs: the simulator's
	// ceilings, then the lecture's Go kernels on it, at small sizes.
	// On a GPU, run gocu bench --plot roofline.png instead.
	dev, err := gocu.Default()
	if err != nil {
		log.Fatal(err)
	}
	o := bench.Options{Device: bench.Sim, Small: true, Reps: 3, Seed: 1}
	if dev.Kind() == gocu.CUDA {
		o = bench.Options{Device: bench.CUDA, Only: []string{"gray", "matmul_naive", "matmul_tiled"}, Seed: 1}
	}
	rep, err := bench.Run(o)
	if err != nil {
		log.Fatal(err)
	}
	c := rep.Ceilings
	fmt.Printf("roofs: memory %.3g GB/s, FP32 %s: the ridge is at %.2g FLOP per byte\n",
		c.MemoryGBps, units.FLOPRate(c.FP32TFLOPs*1e12), c.FP32TFLOPs*1e3/c.MemoryGBps)
	for _, r := range rep.Results {
		if r.Ceiling != "" {
			continue // the workloads that measured the roofs
		}
		// Which roof bounds a kernel depends on the device's ridge, not
		// on the kernel alone: grayscale is under the compute roof of the
		// simulator's low ridge and under the memory roof of a GPU's.
		roof := "memory"
		if r.Roof == "fp32" || r.Roof == "tf32" {
			roof = "compute"
		}
		fmt.Printf("%-17s %5.3g FLOP/B  %14s  %5.2g%% of this device's %s roof\n",
			r.Name, r.Intensity, units.FLOPRate(r.TFLOPs*1e12), r.Percent, roof)
	}
	path := filepath.Join(os.TempDir(), "gocu-roofline.png")
	if err := rep.PlotFile(path); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", path)
}
