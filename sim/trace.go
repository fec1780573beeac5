package sim

import (
	"context"
	"sync/atomic"
)

// Tracer observes every Launch: package prof installs one that records
// each launch with its wall time. Begin is called before the launch runs
// and End after, with its error, on the launching goroutine, from any
// number of goroutines at once. With no Tracer installed the cost is one
// atomic load per launch.
type Tracer interface {
	// Begin receives the launch's configuration and kernel as given to
	// Launch and returns a value passed to End.
	Begin(cfg *Config, k *Kernel) any
	End(token any, err error)
}

type tracerRef struct{ t Tracer }

var tracer atomic.Pointer[tracerRef]

// SetTracer installs t as the process's launch tracer (nil removes it) and
// returns the one it replaces.
func SetTracer(t Tracer) Tracer {
	var ref *tracerRef
	if t != nil {
		ref = &tracerRef{t}
	}
	if old := tracer.Swap(ref); old != nil {
		return old.t
	}
	return nil
}

func (r *tracerRef) launch(ctx context.Context, cfg Config, k Kernel) error {
	tok := r.t.Begin(&cfg, &k)
	err := launchNow(ctx, cfg, k)
	r.t.End(tok, err)
	return err
}
