package frame

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// Frame is a table of named columns of equal length on one device.
// Frames are immutable: operations return new frames, which may share
// columns with their inputs.
type Frame struct {
	dev  *gocu.Device
	cols []*Series
	n    int
}

// New returns a frame of the columns on dev. Names must be distinct, the
// lengths equal and every column on dev.
func New(dev *gocu.Device, cols ...*Series) (*Frame, error) {
	const op = "New"
	if dev == nil {
		return nil, errorf(op, ErrValue, "nil device")
	}
	f := &Frame{dev: dev, cols: cols}
	seen := map[string]bool{}
	for i, c := range cols {
		if c == nil {
			return nil, errorf(op, ErrValue, "column %d is nil", i)
		}
		if seen[c.name] {
			return nil, errorf(op, ErrColumn, "column %q appears twice", c.name)
		}
		seen[c.name] = true
		if c.dev != dev {
			return nil, errorf(op, ErrValue, "column %q is on %v, the frame on %v", c.name, c.dev, dev)
		}
		if i == 0 {
			f.n = c.n
		} else if c.n != f.n {
			return nil, errorf(op, ErrLength, "column %q has %d rows, column %q %d", c.name, c.n, cols[0].name, f.n)
		}
	}
	return f, nil
}

// Device returns the device the frame's columns live on.
func (f *Frame) Device() *gocu.Device { return f.dev }

// Len returns the number of rows.
func (f *Frame) Len() int { return f.n }

// Width returns the number of columns.
func (f *Frame) Width() int { return len(f.cols) }

// Names returns the column names in order.
func (f *Frame) Names() []string {
	s := make([]string, len(f.cols))
	for i, c := range f.cols {
		s[i] = c.name
	}
	return s
}

// Columns returns the columns in order.
func (f *Frame) Columns() []*Series { return append([]*Series(nil), f.cols...) }

// Column returns the column named name; an unknown name is an ErrColumn
// error naming the closest ones.
func (f *Frame) Column(name string) (*Series, error) { return f.col("Column", name) }

func (f *Frame) col(op, name string) (*Series, error) {
	for _, c := range f.cols {
		if c.name == name {
			return c, nil
		}
	}
	return nil, unknownColumn(op, name, f.Names())
}

func (f *Frame) index(name string) int {
	for i, c := range f.cols {
		if c.name == name {
			return i
		}
	}
	return -1
}

// Select returns the named columns, in the order given.
func (f *Frame) Select(names ...string) (*Frame, error) {
	cols := make([]*Series, len(names))
	for i, n := range names {
		c, err := f.col("Select", n)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return New(f.dev, cols...)
}

// Drop returns the frame without the named columns.
func (f *Frame) Drop(names ...string) (*Frame, error) {
	drop := map[string]bool{}
	for _, n := range names {
		if _, err := f.col("Drop", n); err != nil {
			return nil, err
		}
		drop[n] = true
	}
	var cols []*Series
	for _, c := range f.cols {
		if !drop[c.name] {
			cols = append(cols, c)
		}
	}
	return New(f.dev, cols...)
}

// WithColumn returns the frame with s added, or replacing the column of
// its name.
func (f *Frame) WithColumn(s *Series) (*Frame, error) {
	cols := append([]*Series(nil), f.cols...)
	if i := f.index(s.name); i >= 0 {
		cols[i] = s
	} else {
		cols = append(cols, s)
	}
	if len(f.cols) == 0 {
		return New(f.dev, s)
	}
	return New(f.dev, cols...)
}

// Eval computes every pending (lazy) column and returns the first error.
// On a GPU it queues the work and does not wait for it.
func (f *Frame) Eval() error {
	for _, c := range f.cols {
		for _, a := range []*array.Array{c.data, c.valid} {
			if a == nil {
				continue
			}
			if err := a.Eval().Err(); err != nil {
				return wrapErr("Eval", ErrValue, err, "column %q", c.name)
			}
		}
	}
	return nil
}

// Head returns the first n rows (all when there are fewer).
func (f *Frame) Head(n int) *Frame { return f.Slice(0, min(max(n, 0), f.n)) }

// Tail returns the last n rows (all when there are fewer).
func (f *Frame) Tail(n int) *Frame { return f.Slice(f.n-min(max(n, 0), f.n), f.n) }

// Slice returns rows i to j, clamped to the frame, sharing memory.
func (f *Frame) Slice(i, j int) *Frame {
	i, j = min(max(i, 0), f.n), min(max(j, 0), f.n)
	j = max(i, j)
	g := &Frame{dev: f.dev, n: j - i, cols: make([]*Series, len(f.cols))}
	for k, c := range f.cols {
		g.cols[k] = c.slice(i, j)
	}
	return g
}

// Take returns the rows at the int64 indices idx, in that order.
func (f *Frame) Take(idx *array.Array) (*Frame, error) {
	if err := idx.Err(); err != nil {
		return nil, wrapErr("Take", ErrValue, err, "indices")
	}
	return f.takeNull(idx, nil)
}

func (f *Frame) takeNull(idx, null *array.Array) (*Frame, error) {
	g := &Frame{dev: f.dev, n: idx.Size(), cols: make([]*Series, len(f.cols))}
	for k, c := range f.cols {
		t, err := c.take(idx, null)
		if err != nil {
			return nil, err
		}
		g.cols[k] = t
	}
	return g, nil
}

// maxRows is where printing switches to the first and last rows, as
// pandas' display.max_rows.
const maxRows = 60

// String prints the frame as pandas does: the row numbers (a frame has no
// index: a Tail starts at 0), right-aligned
// columns, NaN or <NA> for nulls and, past 60 rows, the first and last
// five with the frame's shape below. A read error prints in its place.
func (f *Frame) String() string {
	s, err := f.format()
	if err != nil {
		return "frame: " + err.Error()
	}
	return s
}

func (f *Frame) format() (string, error) {
	rows := make([]int, 0, min(f.n, maxRows))
	cut := -1
	if f.n > maxRows {
		for i := 0; i < 5; i++ {
			rows = append(rows, i)
		}
		cut = 5
		for i := f.n - 5; i < f.n; i++ {
			rows = append(rows, i)
		}
	} else {
		for i := 0; i < f.n; i++ {
			rows = append(rows, i)
		}
	}
	table := make([][]string, len(f.cols)+1)
	idx := []string{""}
	for _, r := range rows {
		idx = append(idx, strconv.Itoa(r))
	}
	table[0] = idx
	for k, c := range f.cols {
		cells, err := c.cells(rows)
		if err != nil {
			return "", err
		}
		table[k+1] = append([]string{c.name}, cells...)
	}
	width := make([]int, len(table))
	for k, col := range table {
		for _, s := range col {
			width[k] = max(width[k], len([]rune(s)))
		}
	}
	if cut >= 0 {
		width[0] = max(width[0], 2)
		for k := 1; k < len(width); k++ {
			width[k] = max(width[k], 3)
		}
	}
	var b strings.Builder
	for r := 0; r < len(rows)+1; r++ {
		if cut >= 0 && r-1 == cut {
			for k := range table {
				if k > 0 {
					b.WriteString("  ")
				}
				dots := "..."
				if k == 0 {
					dots = ".."
				}
				pad(&b, dots, width[k], k == 0)
			}
			b.WriteString("\n")
		}
		for k, col := range table {
			if k > 0 {
				b.WriteString("  ")
			}
			pad(&b, col[r], width[k], k == 0)
		}
		b.WriteString("\n")
	}
	if cut >= 0 || len(f.cols) == 0 {
		fmt.Fprintf(&b, "\n[%d rows x %d columns]\n", f.n, len(f.cols))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func pad(b *strings.Builder, s string, w int, left bool) {
	n := w - len([]rune(s))
	if left {
		b.WriteString(s)
		b.WriteString(strings.Repeat(" ", n))
		return
	}
	b.WriteString(strings.Repeat(" ", n))
	b.WriteString(s)
}

// cells formats the values at rows as pandas prints them.
func (s *Series) cells(rows []int) ([]string, error) {
	sub, err := s.rowsHost(rows)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	switch {
	case sub.kind == String || sub.kind == Categorical:
		strs, valid, err := sub.Strings()
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = strs[i]
			if !valid[i] {
				out[i] = "<NA>"
			}
		}
	case sub.kind == Timestamp:
		v, valid, err := sub.Int64s()
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = "NaT"
			if valid[i] {
				t := time.Unix(0, v[i]).UTC()
				out[i] = t.Format("2006-01-02 15:04:05.999999999")
			}
		}
	case sub.data.DType().IsFloating():
		v, valid, err := sub.Float64s()
		if err != nil {
			return nil, err
		}
		return formatFloats(v, valid), nil
	case sub.data.DType() == array.Bool:
		v, err := sub.data.Bools()
		if err != nil {
			return nil, err
		}
		valid, err := sub.validHost()
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = "<NA>"
			if valid[i] {
				out[i] = "False"
				if v[i] {
					out[i] = "True"
				}
			}
		}
	default:
		v, valid, err := sub.Int64s()
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = "<NA>"
			if valid[i] {
				out[i] = strconv.FormatInt(v[i], 10)
			}
		}
	}
	return out, nil
}

// rowsHost returns the column restricted to rows, gathered on the device.
func (s *Series) rowsHost(rows []int) (*Series, error) {
	if len(rows) == s.n {
		return s, nil
	}
	ix := make([]int64, len(rows))
	for i, r := range rows {
		ix[i] = int64(r)
	}
	return s.take(array.FromSliceOn(s.dev, ix), nil)
}

// formatFloats formats a float column as pandas does: six significant
// decimals, one number of decimals for the column, trailing zeros
// common to every value dropped.
func formatFloats(v []float64, valid []bool) []string {
	out := make([]string, len(v))
	big := false
	for i, x := range v {
		if valid[i] && !math.IsInf(x, 0) && !math.IsNaN(x) && x != 0 && (math.Abs(x) >= 1e16 || math.Abs(x) < 1e-4) {
			big = true
		}
	}
	if big {
		for i, x := range v {
			out[i] = "NaN"
			if valid[i] {
				out[i] = strconv.FormatFloat(x, 'e', 6, 64)
			}
		}
		return out
	}
	dec := 1
	for i, x := range v {
		if !valid[i] || math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		s := strconv.FormatFloat(x, 'f', 6, 64)
		s = strings.TrimRight(s, "0")
		if d := len(s) - strings.IndexByte(s, '.') - 1; d > dec {
			dec = d
		}
	}
	for i, x := range v {
		switch {
		case !valid[i] || math.IsNaN(x):
			out[i] = "NaN"
		case math.IsInf(x, 1):
			out[i] = "inf"
		case math.IsInf(x, -1):
			out[i] = "-inf"
		default:
			out[i] = strconv.FormatFloat(x, 'f', dec, 64)
		}
	}
	return out
}
