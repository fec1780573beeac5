package frame

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors: every error of the package wraps one of them (test with
// errors.Is) inside an *Error naming the operation.
var (
	// ErrColumn: an unknown or repeated column name.
	ErrColumn = errors.New("bad column")
	// ErrType: an operation not defined for a column's type, or columns
	// whose types do not match (join keys, concatenation).
	ErrType = errors.New("bad type")
	// ErrLength: columns or masks of different lengths.
	ErrLength = errors.New("length mismatch")
	// ErrValue: a bad argument (an unknown aggregation, a negative count).
	ErrValue = errors.New("bad value")
	// ErrFormat: malformed input (a CSV field that does not parse, a
	// corrupt Parquet or IPC file).
	ErrFormat = errors.New("bad input")
)

// Error is a failed frame operation.
type Error struct {
	Op    string // the operation, e.g. "GroupBy"
	Kind  error  // one of the sentinels
	Msg   string
	Cause error // an underlying error (array, arrow, I/O), or nil
}

func (e *Error) Error() string {
	s := "frame: " + e.Op + ": " + e.Msg
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

func errorf(op string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func wrapErr(op string, kind error, err error, format string, args ...any) *Error {
	return &Error{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...), Cause: err}
}

// unknownColumn names the columns closest to name by edit distance.
func unknownColumn(op, name string, have []string) *Error {
	type cand struct {
		s string
		d int
	}
	var cs []cand
	for _, h := range have {
		d := editDistance(strings.ToLower(name), strings.ToLower(h))
		if d <= max(2, len(name)/2) {
			cs = append(cs, cand{h, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	if len(cs) > 3 {
		cs = cs[:3]
	}
	if len(cs) == 0 {
		return errorf(op, ErrColumn, "no column %q (columns: %s)", name, quoteList(have, 10))
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.s
	}
	return errorf(op, ErrColumn, "no column %q; did you mean %s?", name, quoteList(names, 3))
}

func quoteList(s []string, n int) string {
	var b strings.Builder
	for i, x := range s {
		if i == n {
			fmt.Fprintf(&b, ", ... (%d more)", len(s)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", x)
	}
	return b.String()
}

// editDistance is Levenshtein's distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
