package frame

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// TestGPUMatchesCPU runs the golden queries on GPU 0 and on the CPU and
// compares the results. (GOCU_DEVICE=cuda runs every test on the GPU.)
func TestGPUMatchesCPU(t *testing.T) {
	gpu, err := gpuDev()
	gputest.Need(t, err)
	cpu := gocu.MustOpen("cpu")
	read := func(dev *gocu.Device) *Frame {
		fh, err := os.Open(filepath.Join("testdata", "input.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		f, err := ReadCSV(dev, fh, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	queries := map[string]func(f *Frame) (*Frame, error){
		"groupby": func(f *Frame) (*Frame, error) {
			return f.GroupBy("id1").Agg(Sum("v1"), Mean("v3"), Count("v3").Named("c"), Min("v3").Named("mn"),
				Max("v1").Named("mx"), Std("v3").Named("sd"), First("v3").Named("f"), Last("id4").Named("l"),
				NUnique("v1").Named("nu"), Median("v3").Named("md"))
		},
		"groupby2": func(f *Frame) (*Frame, error) {
			return f.GroupBy("id4", "id2").Agg(Sum("v3"), Var("v1"))
		},
		"sort": func(f *Frame) (*Frame, error) { return f.Sort(Desc("id2"), Asc("id4"), Asc("v3")) },
		"filter": func(f *Frame) (*Frame, error) {
			g, err := f.With("z", Col("v1").Mul(Col("v3")).Add(1))
			if err != nil {
				return nil, err
			}
			return g.Filter(Col("z").Gt(10).Or(Col("id4").Eq("id3")))
		},
		"join": func(f *Frame) (*Frame, error) {
			r, err := f.GroupBy("id1").Agg(Mean("v3").Named("w"))
			if err != nil {
				return nil, err
			}
			return f.Join(r, Left, "id1")
		},
	}
	for name, q := range queries {
		want, err := q(read(cpu))
		if err != nil {
			t.Fatalf("%s on the CPU: %v", name, err)
		}
		got, err := q(read(gpu))
		if err != nil {
			t.Fatalf("%s on the GPU: %v", name, err)
		}
		t.Run(name, func(t *testing.T) { sameValues(t, got, want) })
	}
}
