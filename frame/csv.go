package frame

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// CSVOptions configure ReadCSV. The zero value reads comma-separated
// values with a header row and infers every column's type.
type CSVOptions struct {
	// Comma separates fields (',' when zero).
	Comma rune
	// Types fixes the type of named columns: "int64", "int32", "float64",
	// "float32", "bool", "string" or "category". A value that does not
	// parse as its column's type is an ErrFormat error naming the row and
	// the column.
	Types map[string]string
}

// naValues are the fields read as null, pandas' default na_values.
var naValues = map[string]bool{
	"": true, "#N/A": true, "#N/A N/A": true, "#NA": true, "-1.#IND": true, "-1.#QNAN": true, "-NaN": true,
	"-nan": true, "1.#IND": true, "1.#QNAN": true, "<NA>": true, "N/A": true, "NA": true, "NULL": true,
	"NaN": true, "None": true, "n/a": true, "nan": true, "null": true,
}

// csvSplitMin is the input size from which ReadCSV parses pieces in
// parallel.
var csvSplitMin = 1 << 22

// column kinds while inferring, widening in this order.
const (
	csvNull = iota // only nulls so far
	csvBool
	csvInt
	csvFloat
	csvString
)

type csvCol struct {
	name   string
	kind   int
	fixed  string // the type from CSVOptions.Types, or ""
	ints   []int64
	floats []float64
	bools  []bool
	strs   []string
	valid  []bool
	nulls  int
}

// ReadCSV reads CSV with a header row into a frame on dev. Like pandas'
// read_csv it infers each column's type from all its values (bool, then
// int64, float64 and string, widening as values require; a column read as
// numbers and widened to strings holds the numbers' shortest text) and
// reads empty fields and pandas' other na_values as null. A malformed
// row is an ErrFormat error naming the row (1 is the first after the
// header), its line and the column.
func ReadCSV(dev *gocu.Device, r io.Reader, opt *CSVOptions) (*Frame, error) {
	const op = "ReadCSV"
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, wrapErr(op, ErrFormat, err, "reading")
	}
	comma := ','
	if opt != nil && opt.Comma != 0 {
		comma = opt.Comma
	}
	reader := func(b []byte) *csv.Reader {
		cr := csv.NewReader(bytes.NewReader(b))
		cr.ReuseRecord = true
		cr.Comma = comma
		cr.FieldsPerRecord = -1 // parseCSV checks against the header
		return cr
	}
	cr := reader(data)
	head, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, errorf(op, ErrFormat, "no header row")
		}
		return nil, wrapErr(op, ErrFormat, err, "header")
	}
	head = slices.Clone(head)
	seen := map[string]bool{}
	for _, h := range head {
		if seen[h] {
			return nil, errorf(op, ErrColumn, "column %q appears twice in the header", h)
		}
		seen[h] = true
	}
	fixed := map[string]string{}
	if opt != nil {
		for name, typ := range opt.Types {
			if !seen[name] {
				return nil, unknownColumn(op, name, head)
			}
			switch typ {
			case "int64", "int32", "float64", "float32", "bool", "string", "category":
			default:
				return nil, errorf(op, ErrValue, "column %q: unknown type %q", name, typ)
			}
			fixed[name] = typ
		}
	}
	newCols := func() []*csvCol {
		cols := make([]*csvCol, len(head))
		for i, h := range head {
			cols[i] = &csvCol{name: h, fixed: fixed[h]}
		}
		return cols
	}
	var cols []*csvCol
	body := bytes.IndexByte(data, '\n') + 1
	workers := runtime.GOMAXPROCS(0)
	if len(data) < csvSplitMin || workers < 2 || bytes.IndexByte(data, '"') >= 0 || body == 0 {
		// Quoted fields may hold newlines: read in one piece.
		cols = newCols()
		if _, err := parseCSV(cr, cols, len(head), 0, 0); err != nil {
			return nil, err
		}
	} else {
		// Without quotes every line is a record: parse pieces on all cores.
		var starts []int
		for k := range workers {
			at := body + (len(data)-body)*k/workers
			if k > 0 {
				nl := bytes.IndexByte(data[at:], '\n')
				if nl < 0 {
					break
				}
				at += nl + 1
			}
			if len(starts) == 0 || at > starts[len(starts)-1] {
				starts = append(starts, at)
			}
		}
		starts = append(starts, len(data))
		parts := make([][]*csvCol, len(starts)-1)
		rows := make([]int, len(parts))
		errs := make([]error, len(parts))
		lines := make([]int, len(parts))
		var wg sync.WaitGroup
		for k := range parts {
			lines[k] = bytes.Count(data[:starts[k]], []byte{'\n'})
			wg.Go(func() {
				parts[k] = newCols()
				rows[k], errs[k] = parseCSV(reader(data[starts[k]:starts[k+1]]), parts[k], len(head), 0, lines[k])
			})
		}
		wg.Wait()
		base := 0
		for k, err := range errs {
			if err != nil {
				// Number the row from the file's start.
				_, err = parseCSV(reader(data[starts[k]:starts[k+1]]), newCols(), len(head), base, lines[k])
				return nil, err
			}
			base += rows[k]
		}
		cols = mergeCSV(parts)
	}
	series := make([]*Series, len(cols))
	for i, c := range cols {
		s, err := c.series(dev)
		if err != nil {
			return nil, retag(op, err)
		}
		series[i] = s
	}
	return New(dev, series...)
}

// parseCSV reads cr's records into cols; rows and lines count from
// rowBase and lineBase. It returns the number of records.
func parseCSV(cr *csv.Reader, cols []*csvCol, width, rowBase, lineBase int) (int, error) {
	const op = "ReadCSV"
	n := 0
	for ; ; n++ {
		row := rowBase + n + 1
		rec, err := cr.Read()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				if errors.Is(pe.Err, csv.ErrFieldCount) {
					return n, errorf(op, ErrFormat, "row %d (line %d): %d fields, the header has %d", row, lineBase+pe.Line, len(rec), width)
				}
				return n, wrapErr(op, ErrFormat, pe.Err, "row %d (line %d, byte %d)", row, lineBase+pe.Line, pe.Column)
			}
			return n, wrapErr(op, ErrFormat, err, "row %d", row)
		}
		if len(rec) != width {
			line, _ := cr.FieldPos(0)
			return n, errorf(op, ErrFormat, "row %d (line %d): %d fields, the header has %d", row, lineBase+line, len(rec), width)
		}
		for i, s := range rec {
			if err := cols[i].add(s); err != nil {
				line, _ := cr.FieldPos(i)
				return n, errorf(op, ErrFormat, "row %d (line %d), column %q: %v", row, lineBase+line, cols[i].name, err)
			}
		}
	}
}

// mergeCSV joins the columns parsed from consecutive pieces, widening
// each to the widest kind of its pieces.
func mergeCSV(parts [][]*csvCol) []*csvCol {
	out := parts[0]
	for i, c := range out {
		target := csvNull
		hasBool, hasNum := false, false
		for _, p := range parts {
			target = max(target, p[i].kind)
			hasBool = hasBool || p[i].kind == csvBool
			hasNum = hasNum || p[i].kind == csvInt || p[i].kind == csvFloat
		}
		if hasBool && hasNum {
			target = csvString
		}
		m := &csvCol{name: c.name, kind: target, fixed: c.fixed}
		for _, p := range parts {
			pc := p[i]
			if pc.kind == csvNull {
				pc.kind = target
				n := len(pc.valid)
				pc.bools, pc.ints, pc.floats, pc.strs = make([]bool, n), make([]int64, n), make([]float64, n), make([]string, n)
			}
			for pc.kind != target {
				pc.widen()
			}
			m.valid = append(m.valid, pc.valid...)
			m.nulls += pc.nulls
			switch target {
			case csvBool:
				m.bools = append(m.bools, pc.bools...)
			case csvInt:
				m.ints = append(m.ints, pc.ints...)
			case csvFloat:
				m.floats = append(m.floats, pc.floats...)
			case csvString:
				m.strs = append(m.strs, pc.strs...)
			}
		}
		out[i] = m
	}
	return out
}

func (c *csvCol) add(s string) error {
	if naValues[s] {
		c.nulls++
		c.valid = append(c.valid, false)
		switch c.kind {
		case csvBool:
			c.bools = append(c.bools, false)
		case csvInt:
			c.ints = append(c.ints, 0)
		case csvFloat:
			c.floats = append(c.floats, 0)
		case csvString:
			c.strs = append(c.strs, "")
		}
		return nil
	}
	c.valid = append(c.valid, true)
	for {
		switch c.kind {
		case csvNull:
			c.kind = c.first(s)
			n := len(c.valid) - 1
			switch c.kind {
			case csvBool:
				c.bools = make([]bool, n, max(n, 1024))
			case csvInt:
				c.ints = make([]int64, n, max(n, 1024))
			case csvFloat:
				c.floats = make([]float64, n, max(n, 1024))
			case csvString:
				c.strs = make([]string, n, max(n, 1024))
			}
			continue
		case csvBool:
			switch s {
			case "True", "true", "TRUE":
				c.bools = append(c.bools, true)
				return nil
			case "False", "false", "FALSE":
				c.bools = append(c.bools, false)
				return nil
			}
		case csvInt:
			if v, err := strconv.ParseInt(s, 10, 64); err == nil {
				c.ints = append(c.ints, v)
				return nil
			}
		case csvFloat:
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				c.floats = append(c.floats, v)
				return nil
			}
		case csvString:
			c.strs = append(c.strs, strings.Clone(s))
			return nil
		}
		if c.fixed != "" && c.fixed != "string" && c.fixed != "category" &&
			!(c.kind == csvInt && (c.fixed == "float64" || c.fixed == "float32")) {
			return fmt.Errorf("cannot parse %q as %s", s, c.fixed)
		}
		c.widen()
	}
}

// first is the kind a column starts as from its first value.
func (c *csvCol) first(s string) int {
	switch c.fixed {
	case "bool":
		return csvBool
	case "int64", "int32":
		return csvInt
	case "float64", "float32":
		return csvFloat
	case "string", "category":
		return csvString
	}
	switch s {
	case "True", "true", "TRUE", "False", "false", "FALSE":
		return csvBool
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return csvInt
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return csvFloat
	}
	return csvString
}

// widen moves the column to the next kind that can hold more values.
func (c *csvCol) widen() {
	switch c.kind {
	case csvBool:
		c.strs = make([]string, len(c.bools), cap(c.bools))
		for i, b := range c.bools {
			if c.valid[i] {
				c.strs[i] = strconv.FormatBool(b)
				c.strs[i] = strings.ToUpper(c.strs[i][:1]) + c.strs[i][1:]
			}
		}
		c.bools, c.kind = nil, csvString
	case csvInt:
		c.floats = make([]float64, len(c.ints), cap(c.ints))
		for i, v := range c.ints {
			c.floats[i] = float64(v)
		}
		c.ints, c.kind = nil, csvFloat
	case csvFloat:
		c.strs = make([]string, len(c.floats), cap(c.floats))
		for i, v := range c.floats {
			if c.valid[i] {
				c.strs[i] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
		c.floats, c.kind = nil, csvString
	}
}

func (c *csvCol) series(dev *gocu.Device) (*Series, error) {
	valid := c.valid
	if c.nulls == 0 {
		valid = nil
	}
	switch c.kind {
	case csvNull:
		return NewSeriesValid(dev, c.name, make([]float64, len(c.valid)), c.valid)
	case csvBool:
		return NewSeriesValid(dev, c.name, c.bools, valid)
	case csvInt:
		if c.fixed == "int32" {
			v := make([]int32, len(c.ints))
			for i, x := range c.ints {
				v[i] = int32(x)
			}
			return NewSeriesValid(dev, c.name, v, valid)
		}
		if c.fixed == "float64" || c.fixed == "float32" {
			c.widen()
			return c.series(dev)
		}
		return NewSeriesValid(dev, c.name, c.ints, valid)
	case csvFloat:
		if c.fixed == "float32" {
			v := make([]float32, len(c.floats))
			for i, x := range c.floats {
				v[i] = float32(x)
			}
			return NewSeriesValid(dev, c.name, v, valid)
		}
		return NewSeriesValid(dev, c.name, c.floats, valid)
	}
	if c.fixed == "category" {
		return NewCategorical(dev, c.name, c.strs, valid)
	}
	return NewSeriesValid(dev, c.name, c.strs, valid)
}

// WriteCSV writes the frame as CSV with a header row, as pandas' to_csv
// without the index: nulls as empty fields, floats in their shortest
// exact form, booleans as True and False, timestamps as
// 2006-01-02 15:04:05.999999999 in UTC.
func (f *Frame) WriteCSV(w io.Writer) error {
	const op = "WriteCSV"
	cw := csv.NewWriter(w)
	if err := cw.Write(f.Names()); err != nil {
		return wrapErr(op, ErrValue, err, "header")
	}
	const chunk = 1 << 16
	rec := make([]string, len(f.cols))
	for lo := 0; lo < f.n; lo += chunk {
		hi := min(lo+chunk, f.n)
		part := f.Slice(lo, hi)
		cells := make([][]string, len(f.cols))
		for k, c := range part.cols {
			s, err := c.csvCells()
			if err != nil {
				return wrapErr(op, ErrValue, err, "column %q", c.name)
			}
			cells[k] = s
		}
		for i := 0; i < hi-lo; i++ {
			for k := range rec {
				rec[k] = cells[k][i]
			}
			if err := cw.Write(rec); err != nil {
				return wrapErr(op, ErrValue, err, "row %d", lo+i)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return wrapErr(op, ErrValue, err, "writing")
	}
	return nil
}

func (s *Series) csvCells() ([]string, error) {
	out := make([]string, s.n)
	valid, err := s.validHost()
	if err != nil {
		return nil, err
	}
	switch {
	case s.kind == String || s.kind == Categorical:
		strs, _, err := s.Strings()
		if err != nil {
			return nil, err
		}
		copy(out, strs)
	case s.kind == Timestamp:
		v, err := s.data.Int64s()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			out[i] = time.Unix(0, x).UTC().Format("2006-01-02 15:04:05.999999999")
		}
	case s.data.DType() == array.Bool:
		v, err := s.data.Bools()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			out[i] = "False"
			if x {
				out[i] = "True"
			}
		}
	case s.data.DType().IsFloating():
		v, err := s.data.Float64s()
		if err != nil {
			return nil, err
		}
		bits := 64
		if s.data.DType() != array.Float64 {
			bits = 32
		}
		for i, x := range v {
			if !math.IsNaN(x) {
				out[i] = strconv.FormatFloat(x, 'g', -1, bits)
				if !strings.ContainsAny(out[i], ".eIN") {
					out[i] += ".0"
				}
			}
		}
	default:
		v, err := s.data.Int64s()
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			out[i] = strconv.FormatInt(x, 10)
		}
	}
	for i, ok := range valid {
		if !ok {
			out[i] = ""
		}
	}
	return out, nil
}
