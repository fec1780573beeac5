package bench

import (
	"strings"
	"testing"
)

// The indexing workloads of the numpy suite run and pass their checks on
// the CPU at the small size.
func TestCPUNumpyIndexing(t *testing.T) {
	rep, err := Run(Options{Device: CPU, Suite: "numpy", Small: true, Reps: 2, Seed: 5})
	var tb strings.Builder
	if rep != nil {
		rep.WriteTable(&tb)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, tb.String())
	}
	for _, name := range []string{"take_f32", "embedding_gather", "embedding_scatter_add", "nonzero_f32", "boolean_mask_f32"} {
		x := rep.Result(name)
		if x == nil {
			t.Fatalf("no result for %s:\n%s", name, tb.String())
		}
		if x.Error != "" || x.Skipped != "" || x.Reps != 2 || x.Seconds <= 0 || x.Bytes <= 0 || x.Group != "numpy" {
			t.Errorf("%s: %+v", name, x)
		}
	}
}
