package prof

import (
	"runtime"
	"strconv"
	"time"

	"github.com/gocu-dev/gocu/internal/units"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// SimDevice is the Device of simulator events whose launch names no
// device (sim.Config.Device); a launcher's names its device, "cpu" or
// "sim", both of which run Go kernels on the simulator.
const SimDevice = "sim"

// simTracer is the session's sim.Tracer: launches on the simulator run to
// completion inside Launch, so their wall time is their duration.
type simTracer struct{ s *session }

type simCall struct {
	ev    Event
	start time.Time
}

func (t simTracer) Begin(cfg *sim.Config, k *sim.Kernel) any {
	name := k.Name
	if name == "" {
		name = "kernel"
	}
	dev := cfg.Device
	if dev == "" {
		dev = SimDevice
	}
	c := &simCall{ev: Event{Name: name, Kind: SimKernel, Device: dev, Grid: simDim(cfg.Grid), Block: simDim(cfg.Block),
		Shared: cfg.DynamicSharedBytes}}
	t.s.mu.Lock()
	if _, ok := t.s.prof.Devices[dev]; !ok {
		workers := cfg.Workers
		if workers <= 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		t.s.prof.Devices[dev] = "CPU, Go kernels on the simulator (" + strconv.Itoa(workers) + " workers)"
	}
	t.s.mu.Unlock()
	c.start = time.Now()
	return c
}

func (t simTracer) End(tok any, err error) {
	c, ok := tok.(*simCall)
	if !ok {
		return
	}
	end := time.Now()
	c.ev.Start = c.start.Sub(t.s.began)
	c.ev.Duration = end.Sub(c.start)
	c.ev.HostStart, c.ev.HostDuration = c.ev.Start, c.ev.Duration
	c.ev.Timed = true
	if err != nil {
		c.ev.Failed, c.ev.Note = true, units.OneLine(err)
	}
	t.s.finished(c.ev)
}

func simDim(d kernel.Dim3) [3]int {
	v := [3]int{int(d.X), int(d.Y), int(d.Z)}
	for i := 1; i < 3; i++ {
		if v[i] == 0 {
			v[i] = 1
		}
	}
	return v
}
