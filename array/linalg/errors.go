package linalg

import (
	"errors"
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Sentinel errors. The numerical failures (ErrSingular,
// ErrNotPositiveDefinite, ErrNoConvergence) also match ErrLinAlg, as they
// are all numpy.linalg.LinAlgError in NumPy. Shape and dtype errors match
// array.ErrShape and array.ErrDType as well as ErrNotSquare or ErrLinAlg.
var (
	// ErrLinAlg is NumPy's LinAlgError: a matrix the routine cannot
	// handle (singular, not positive definite, not square, a routine that
	// did not converge).
	ErrLinAlg = errors.New("linalg error")
	// ErrSingular: Solve or Inv met an exactly singular matrix.
	ErrSingular = errors.New("singular matrix")
	// ErrNotPositiveDefinite: Cholesky met a matrix that is not
	// (numerically) positive definite.
	ErrNotPositiveDefinite = errors.New("matrix is not positive definite")
	// ErrNoConvergence: an SVD or an eigensolver did not converge.
	ErrNoConvergence = errors.New("did not converge")
	// ErrNotSquare: the last two axes of a matrix argument differ.
	ErrNotSquare = errors.New("last 2 dimensions of the array must be square")
)

// Error is a failure of a linalg function.
type Error struct {
	Op    string  // the function, e.g. "Solve"
	Kinds []error // the sentinels it matches
	Msg   string
	Cause error // an underlying error (cuSOLVER, the device), or nil
}

func (e *Error) Error() string {
	s := "linalg: " + e.Op + ": " + e.Msg
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinels and the cause.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return append(append([]error{}, e.Kinds...), e.Cause)
	}
	return e.Kinds
}

func errorf(op string, kinds []error, format string, args ...any) error {
	return &Error{Op: op, Kinds: kinds, Msg: fmt.Sprintf(format, args...)}
}

func shapeErr(op, format string, args ...any) error {
	return errorf(op, []error{array.ErrShape, ErrLinAlg}, format, args...)
}

func dtypeErr(op, format string, args ...any) error {
	return errorf(op, []error{array.ErrDType}, format, args...)
}

func valueErr(op, format string, args ...any) error {
	return errorf(op, []error{array.ErrValue}, format, args...)
}

// numErr reports a numerical failure of matrix index (row-major order of
// the batch axes) idx.
func numErr(op string, kind error, batch []int, idx int, format string, args ...any) error {
	where := ""
	if len(batch) > 0 {
		where = fmt.Sprintf(" (matrix %v of the batch)", unravel(idx, batch))
	}
	return errorf(op, []error{kind, ErrLinAlg}, format+where, args...)
}

// unravel turns a flat index into a multi-index over shape.
func unravel(i int, shape []int) []int {
	out := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		out[d] = i % shape[d]
		i /= shape[d]
	}
	return out
}

// fail returns n failed arrays carrying err.
func fail(n int, err error) []*array.Array {
	out := make([]*array.Array, n)
	for i := range out {
		out[i] = array.Failed(err)
	}
	return out
}

// deviceErr reports a failure of the GPU or of its libraries; a missing
// library is said in one line.
func deviceErr(op string, cause error) error {
	var nf *dynlib.NotFoundError
	if errors.As(cause, &nf) {
		return &Error{Op: op, Kinds: []error{array.ErrDevice, errors.Unwrap(nf)}, Msg: nf.Summary() + " (set " + nf.Env + " to the library file)"}
	}
	return &Error{Op: op, Kinds: []error{array.ErrDevice}, Msg: "on the GPU", Cause: cause}
}
