package bench

import "testing"

// The numpy suite runs and checks on the CPU backend at small sizes.
func TestNumpySuiteOnCPU(t *testing.T) {
	rep, err := Run(Options{Device: CPU, Suite: "numpy", Small: true, Reps: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sort_f32", "sort_i32", "argsort_f32", "sort_rows_f32", "topk_k100", "topk_rows_k50", "unique_i32",
		"searchsorted", "bincount", "histogram", "cumsum_f32", "var_rows", "median_rows",
		"take_f32", "embedding_gather", "embedding_scatter_add", "nonzero_f32", "boolean_mask_f32"}
	for _, name := range want {
		x := rep.Result(name)
		if x == nil || x.Error != "" || x.Skipped != "" || x.Seconds <= 0 {
			t.Errorf("%s: %+v", name, x)
		}
	}
	if len(rep.Results) != len(want) {
		t.Errorf("%d results, want %d", len(rep.Results), len(want))
	}
}
