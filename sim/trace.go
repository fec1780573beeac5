package sim

import (
	"context"

	"github.com/gocu-dev/gocu/internal/hook"
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

var tracer hook.Slot[Tracer]

// SetTracer installs t as the process's launch tracer (nil removes it) and
// returns the one it replaces.
func SetTracer(t Tracer) Tracer { return tracer.Set(t) }

func tracedLaunch(ctx context.Context, t Tracer, cfg Config, k Kernel) error {
	tok := t.Begin(&cfg, &k)
	err := launchNow(ctx, cfg, k)
	t.End(tok, err)
	return err
}
