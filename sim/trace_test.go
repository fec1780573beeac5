package sim_test

import (
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

type simRecorder struct {
	names []string
	errs  []error
}

func (r *simRecorder) Begin(cfg *sim.Config, k *sim.Kernel) any {
	r.names = append(r.names, k.Name)
	return len(r.names) - 1
}

func (r *simRecorder) End(tok any, err error) {
	if tok.(int) != len(r.errs) {
		panic("End out of order")
	}
	r.errs = append(r.errs, err)
}

func TestTracerSeesLaunches(t *testing.T) {
	rec := &simRecorder{}
	sim.SetTracer(rec)
	defer sim.SetTracer(nil)
	out := make([]int32, 64)
	cfg := sim.Config{Grid: kernel.Dim3{X: 2}, Block: kernel.Dim3{X: 32}, Seed: 1}
	fill := sim.Kernel{Name: "fill", Func: func(th *kernel.Thread) { out[th.Index()] = th.Index() }}
	if err := sim.Launch(cfg, fill); err != nil {
		t.Fatal(err)
	}
	over := sim.Kernel{Name: "over", Func: func(th *kernel.Thread) { out[th.Index()+1] = 0 }}
	if err := sim.Launch(cfg, over); err == nil {
		t.Fatal("the out-of-range launch succeeded")
	}
	if sim.SetTracer(nil) != rec {
		t.Error("SetTracer did not return the installed tracer")
	}
	if err := sim.Launch(cfg, fill); err != nil {
		t.Fatal(err)
	}
	if len(rec.names) != 2 || rec.names[0] != "fill" || rec.names[1] != "over" || rec.errs[0] != nil || rec.errs[1] == nil {
		t.Errorf("tracer saw %q with errors %v", rec.names, rec.errs)
	}
	for i, v := range out {
		if v != int32(i) {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
}
