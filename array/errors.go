package array

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/internal/syncdebug"
)

// Sentinel errors: every error an array operation reports wraps one of
// them (test with errors.Is) inside an *Error (errors.As) that names the
// operation.
var (
	// ErrShape: shapes that cannot be broadcast, reshaped or multiplied.
	ErrShape = errors.New("shape mismatch")
	// ErrAxis: an axis out of range or repeated.
	ErrAxis = errors.New("bad axis")
	// ErrIndex: an index or slice out of range.
	ErrIndex = errors.New("index out of range")
	// ErrDType: an operation not defined for a dtype, or an unsupported
	// Go operand type.
	ErrDType = errors.New("unsupported dtype")
	// ErrValue: a bad argument value (negative size, zero step, a scalar
	// that does not fit the array's dtype, an empty reduction without an
	// identity, a malformed file).
	ErrValue = errors.New("bad value")
	// ErrClosed: use of an array after Close.
	ErrClosed = errors.New("use of closed array")
	// ErrDevice: arrays on different devices, or a failure of the device
	// (allocation, kernel, driver), whose error is wrapped as well.
	ErrDevice = errors.New("device error")
	// ErrOutOfMemory: the device's memory is exhausted (after the garbage
	// collector, the cleanups of unreachable arrays and the allocator's
	// cache released what they could). It comes with ErrDevice.
	ErrOutOfMemory = backend.ErrOutOfMemory
	// ErrHiddenSync: a read to the host refused because it waits for the
	// GPU, in gocu's SyncDebugError mode (GOCU_SYNC_DEBUG=error); the
	// same sentinel as gocu.ErrHiddenSync.
	ErrHiddenSync = syncdebug.ErrHiddenSync
)

// Error is an array operation's failure.
type Error struct {
	Op    string // the operation, e.g. "Add"
	Kind  error  // one of the sentinels
	Msg   string
	Cause error // an underlying error (device, I/O), or nil
	also  error // a second sentinel it matches, not printed
}

func (e *Error) Error() string {
	s := "array: " + e.Op + ": " + e.Msg
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	if e.also != nil {
		errs = append(errs, e.also)
	}
	return errs
}

// valueToo marks err, an *Error, as ErrValue too: NumPy's ValueError
// for a shape that cannot be, which errors.Is ErrShape as well.
func valueToo(err error) error {
	if e, ok := err.(*Error); ok {
		e.also = ErrValue
	}
	return err
}

func errorf(op string, kind error, format string, args ...any) error {
	return &Error{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func deviceErr(op string, cause error) error {
	if cause == nil {
		return nil
	}
	var ae *Error
	if errors.As(cause, &ae) {
		return cause
	}
	var ie *backend.IndexError
	if errors.As(cause, &ie) {
		// Found by a GPU kernel and reported at this synchronisation.
		return &Error{Op: op, Kind: ErrIndex, Msg: ie.Error() + " (found on the device by an earlier indexing operation)"}
	}
	return &Error{Op: op, Kind: ErrDevice, Msg: "device failure", Cause: cause}
}

// shapeString formats a shape as NumPy does in messages, without spaces:
// (3,4), (5,), ().
func shapeString(s []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(s) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}
