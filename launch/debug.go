package launch

import (
	"fmt"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/sim"
)

// runDebug runs a launch of the debug build: it clears the module's error
// buffer, launches the kernel, copies the buffer out and waits for the
// stream, and turns a recorded failure into the simulator's error. The
// buffer belongs to the module, so debug launches of one build take turns.
func (l *Call) runDebug(fn *cuda.Function, args []any) error {
	b := l.b
	b.dmu.Lock()
	defer b.dmu.Unlock()
	one := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: meta.ErrorWords}, Stream: l.cc.Stream}
	if err := b.take.Launch(one, cuda.DevicePtr(0)); err != nil { // clear gocu_err
		return fmt.Errorf("gocu: debug launch of %s: clearing the error buffer: %w", l.km.Name, err)
	}
	if err := fn.Launch(l.cc, args...); err != nil {
		return err
	}
	if err := b.take.Launch(one, b.errDev); err != nil {
		return fmt.Errorf("gocu: debug launch of %s: reading the error buffer: %w", l.km.Name, err)
	}
	if err := cuda.CopyDtoHAsync(b.errHost, b.errDev, l.cc.Stream); err != nil {
		return fmt.Errorf("gocu: debug launch of %s: reading the error buffer: %w", l.km.Name, err)
	}
	if err := l.sync(); err != nil {
		return &cuda.LaunchError{Kernel: l.km.Name, Grid: l.cc.Grid, Block: l.cc.Block, SharedMem: l.cc.SharedMem, Err: err}
	}
	if b.errHost[meta.ErrCode] == 0 {
		return nil
	}
	return debugError(l.p.mod, l.km, b.errHost, func(addr uint64) int { return argAt(l.km, args, addr) })
}

// argAt returns the 1-based number of the slice argument whose device
// memory holds addr, or 0: args are a GPU launch's arguments as the
// generated launcher passes them (a slice as its *cuda.Memory and length).
func argAt(km *meta.Kernel, args []any, addr uint64) int {
	j := 0
	for i, p := range km.Params {
		if p.Kind != meta.Slice {
			j++
			continue
		}
		if j+1 < len(args) {
			m, _ := args[j].(*cuda.Memory)
			n, _ := args[j+1].(int64)
			if m != nil && n > 0 {
				lo := uint64(m.Ptr())
				if addr >= lo && addr < lo+uint64(n)*uint64(p.ElemSize) {
					return i + 1
				}
			}
		}
		j += 2
	}
	return 0
}

// debugError turns the words of a debug build's error buffer into the
// *sim.Error the simulator's checked mode reports for the same fault, so
// that the GPU and the simulator print the same message (the GPU's has no
// schedule seed). arg names the kernel argument holding an address (0 for
// none). For an index out of range the message is the simulator's; other
// checks give the simulator's kind and the closest message the recorded
// values allow.
func debugError(m *meta.Module, km *meta.Kernel, w []uint64, arg func(addr uint64) int) error {
	e := &sim.Error{
		Kernel: km.Name,
		Block:  kernel.Dim3{X: int32(w[meta.ErrBlockX]), Y: int32(w[meta.ErrBlockX+1]), Z: int32(w[meta.ErrBlockX+2])},
		Thread: kernel.Dim3{X: int32(w[meta.ErrThreadX]), Y: int32(w[meta.ErrThreadX+1]), Z: int32(w[meta.ErrThreadX+2])},
	}
	if id := w[meta.ErrSite]; id < uint64(len(m.Sites)) && m.Sites[id] != nil {
		s := m.Sites[id]
		e.Pos = sim.Pos{File: s.File, Line: int(s.Line), Col: int(s.Col), Expr: s.Expr}
	}
	value, value2, length := int64(w[meta.ErrValue]), int64(w[meta.ErrValue2]), int64(w[meta.ErrLength])
	switch code := meta.ErrorCode(w[meta.ErrCode]); code {
	case meta.ErrIndex:
		e.Kind, e.Op = sim.KindOutOfRange, "index"
		e.Index, e.Length = int(value), int(length)
		if value2 != 0 && arg != nil {
			if a := arg(uint64(value2)); a > 0 {
				e.Memory = fmt.Sprintf("global memory (argument %d)", a)
			}
		}
	case meta.ErrSliceBounds:
		// The Go runtime's message for s[lo:hi], which the simulator
		// reports for the same slicing.
		e.Kind, e.Op, e.Length = sim.KindOutOfRange, "slice", int(length)
		lo, hi := value, value2
		switch {
		case hi < 0 || hi > length:
			e.Index, e.Msg = int(hi), fmt.Sprintf("slice bounds out of range [:%d] with capacity %d", hi, length)
		case lo < 0:
			e.Index, e.Length, e.Msg = int(lo), -1, fmt.Sprintf("slice bounds out of range [%d:]", lo)
		default:
			e.Index, e.Length, e.Msg = int(lo), -1, fmt.Sprintf("slice bounds out of range [%d:%d]", lo, hi)
		}
	case meta.ErrDivide:
		e.Kind, e.Value = sim.KindPanic, divideError
	case meta.ErrShift:
		e.Kind, e.Value = sim.KindPanic, shiftError
	case meta.ErrReinterpret:
		e.Kind, e.Op = sim.KindMisaligned, "Reinterpret"
		e.Msg = fmt.Sprintf("kernel.Reinterpret: %d bytes are not a whole number of %d-byte elements", value, length)
	case meta.ErrAlign:
		e.Kind, e.Op = sim.KindMisaligned, "Reinterpret"
		e.Msg = fmt.Sprintf("kernel.Reinterpret: data at %#x is not %d-byte aligned (a misaligned address on the GPU)", uint64(value2), length)
	default:
		e.Kind = sim.KindPanic
		e.Value = fmt.Sprintf("unknown debug-mode error code %d (the generated source is newer than this gocu)", uint64(code))
	}
	return e
}

// The Go runtime's own errors, for the checks whose failure is a panic in
// Go: the debug build reports the same values, which errors.Is and
// errors.As see through *sim.Error's Unwrap.
var (
	divideError = runtimeError(func() { var z int; _ = 1 / z })
	shiftError  = runtimeError(func() { s := -1; _ = 1 << s })
)

func runtimeError(f func()) (err error) {
	defer func() { err, _ = recover().(error) }()
	f()
	return nil
}
