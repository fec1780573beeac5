//go:build gocu_fakedriver

package gpu

import (
	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cuda"
)

// NewFake returns a backend on a cuda.FakeDevice (-tags gocu_fakedriver):
// requests are planned and launched as on a GPU, but kernels are not
// compiled (no NVRTC) and do nothing, so only the Go side is real. For
// benchmarks of that side on machines without a GPU.
func NewFake(dev *cuda.Device) (*Backend, error) {
	s := dev.FakeStream() // not the default stream: it can capture
	b := &Backend{
		dev:     dev,
		stream:  s,
		name:    "cuda:fake",
		sms:     dev.Props().Multiprocessors,
		arch:    "sm_90",
		kernels: cudagen.NewCache[any](4096, nil),
	}
	mod := &module{}
	b.load = func(k *cudagen.Kernel) (*kfunc, error) {
		return &kfunc{fn: dev.FakeFunction(k.Name), mod: mod, perSM: 8}, nil
	}
	b.mods.init(b, moduleLimit)
	b.plans.init(planLimit)
	zero, err := dev.AllocOn(b.stream, 4*ticketWords)
	if err != nil {
		return nil, err
	}
	b.zero = zero
	// The indexing error words, made now: not inside a graph capture.
	if _, err := b.ixWords(); err != nil {
		return nil, err
	}
	return b, nil
}
