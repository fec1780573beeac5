//go:build gocu_fakedriver

package array

import "testing"

// The indexing operations plan and launch through the whole array layer
// on the fake GPU (kernels do nothing, so only shapes and errors are
// checked here; the GPU tests check values).
func TestIndexingFakeGPU(t *testing.T) {
	d := fakeGPU(t)
	x := d.Zeros(Float32, 1000, 64).Eval()
	idx := d.Zeros(Int64, 300).Eval()
	m := d.Zeros(Bool, 1000).Eval()
	for name, a := range map[string]*Array{
		"Take":          x.Take(idx, 0),
		"Take columns":  x.Take(idx.Slice(S(10)), 1),
		"IndexAdd":      x.IndexAdd(0, idx, d.Ones(Float32, 300, 64)),
		"ScatterMax":    x.ScatterMax(1, d.Zeros(Int32, 1000, 64), x),
		"Fancy":         x.Slice(Fancy(idx), Fancy(idx)),
		"MaskStatic":    x.MaskStatic(m, 10, 0.0),
		"NonzeroStatic": m.NonzeroStatic(10, -1)[0],
	} {
		if err := a.Err(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}
