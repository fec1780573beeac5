package gen

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/guard"
	"github.com/gocu-dev/gocu/sim"
)

// The kernel of issue 13 (thread 3 spins in "for { x[0]++ }") through its
// generated launcher on the simulator: with GOCU_SIM_TIMEOUT the launch
// returns a KindTimeout error; in checked mode the generated twin stops
// the loop at its back-edge (kernel.Loop) and the error names the loop's
// line in guard.go.
func TestGeneratedLauncherTimeout(t *testing.T) {
	t.Setenv("GOCU_SIM_TIMEOUT", "200ms")
	d, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	x, err := gocu.Alloc[float32](d, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	start := time.Now()
	err = guard.LaunchSpin(d, gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 32}, Checked: true}, x)
	var e *sim.Error
	if !errors.As(err, &e) || e.Kind != sim.KindTimeout || !errors.Is(err, sim.ErrTimeout) {
		t.Fatalf("got %v, want a sim timeout", err)
	}
	if e.Kernel != "Spin" || len(e.Running) != 1 || e.Running[0].Op != "stopped" || e.Running[0].Thread.X != 3 {
		t.Fatalf("kernel %q, running %+v", e.Kernel, e.Running)
	}
	if p := e.Running[0].Pos; p.File != "guard.go" || p.Line != 35 || p.Expr != "for" {
		t.Errorf("position %v, want the loop at guard.go:35", p)
	}
	if !strings.Contains(err.Error(), "time budget of 200ms exhausted") || !strings.Contains(err.Error(), "thread (3,0,0) at guard.go:35:3 (for) (stopped)") {
		t.Errorf("message %q", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
	t.Log(err)
}
