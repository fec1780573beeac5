package frame

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	aarray "github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// FromRecord returns a frame on dev holding rec's columns. Integers of 8,
// 32 and 64 bits, float32, float64 and booleans keep their type; int16 and
// uint16 become int32, uint32 and uint64 int64 (a uint64 above the int64
// range is an error), float16 float32, dates and timestamps of any unit
// timestamps in nanoseconds (the time zone dropped), strings String
// columns and string dictionaries Categorical ones. On the CPU a numeric
// column without nulls shares rec's memory.
func FromRecord(dev *gocu.Device, rec arrow.RecordBatch) (*Frame, error) {
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		cols[i] = rec.Column(i)
	}
	return fromArrow(dev, "FromRecord", rec.Schema(), cols)
}

// FromTable is FromRecord for a table, whose chunks are concatenated.
func FromTable(dev *gocu.Device, tbl arrow.Table) (*Frame, error) {
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		ch := tbl.Column(i).Data().Chunks()
		if len(ch) == 1 {
			cols[i] = ch[0]
			continue
		}
		if len(ch) == 0 {
			cols[i] = aarray.MakeArrayOfNull(memory.DefaultAllocator, tbl.Column(i).DataType(), 0)
			continue
		}
		c, err := aarray.Concatenate(ch, memory.DefaultAllocator)
		if err != nil {
			return nil, wrapErr("FromTable", ErrFormat, err, "column %q", tbl.Column(i).Name())
		}
		cols[i] = c
	}
	return fromArrow(dev, "FromTable", tbl.Schema(), cols)
}

func fromArrow(dev *gocu.Device, op string, schema *arrow.Schema, cols []arrow.Array) (*Frame, error) {
	series := make([]*Series, len(cols))
	for i, c := range cols {
		s, err := fromArrowArray(dev, op, schema.Field(i).Name, c)
		if err != nil {
			return nil, err
		}
		series[i] = s
	}
	return New(dev, series...)
}

// validity returns a's validity as []bool, or nil without nulls.
func validity(a arrow.Array) []bool {
	if a.NullN() == 0 {
		return nil
	}
	v := make([]bool, a.Len())
	bm := a.NullBitmapBytes()
	off := a.Data().Offset()
	if len(bm) == 0 {
		return v // all null
	}
	for i := range v {
		v[i] = bitutil.BitIsSet(bm, off+i)
	}
	return v
}

// upload puts a numeric column on dev, sharing data on the CPU when it has
// no nulls.
func upload[T array.Elem](dev *gocu.Device, name string, data []T, valid []bool) (*Series, error) {
	if valid == nil && !dev.IsGPU() && len(data) > 0 {
		b, err := gocu.WrapSlice(dev, data, nil)
		if err == nil {
			return FromArray(name, array.FromBuffer(b), nil)
		}
	}
	return NewSeriesValid(dev, name, data, valid)
}

func convert[T, U any](src []T, f func(T) U) []U {
	out := make([]U, len(src))
	for i, x := range src {
		out[i] = f(x)
	}
	return out
}

func fromArrowArray(dev *gocu.Device, op, name string, c arrow.Array) (*Series, error) {
	valid := validity(c)
	switch a := c.(type) {
	case *aarray.Int8:
		return upload(dev, name, a.Int8Values(), valid)
	case *aarray.Uint8:
		return upload(dev, name, a.Uint8Values(), valid)
	case *aarray.Int16:
		return upload(dev, name, convert(a.Int16Values(), func(x int16) int32 { return int32(x) }), valid)
	case *aarray.Uint16:
		return upload(dev, name, convert(a.Uint16Values(), func(x uint16) int32 { return int32(x) }), valid)
	case *aarray.Int32:
		return upload(dev, name, a.Int32Values(), valid)
	case *aarray.Uint32:
		return upload(dev, name, convert(a.Uint32Values(), func(x uint32) int64 { return int64(x) }), valid)
	case *aarray.Int64:
		return upload(dev, name, a.Int64Values(), valid)
	case *aarray.Uint64:
		v := a.Uint64Values()
		for i, x := range v {
			if x > math.MaxInt64 && (valid == nil || valid[i]) {
				return nil, errorf(op, ErrType, "column %q: uint64 value %d at row %d does not fit int64", name, x, i)
			}
		}
		return upload(dev, name, convert(v, func(x uint64) int64 { return int64(x) }), valid)
	case *aarray.Float16:
		v := make([]float32, a.Len())
		for i := range v {
			v[i] = a.Value(i).Float32()
		}
		return upload(dev, name, v, valid)
	case *aarray.Float32:
		return upload(dev, name, a.Float32Values(), valid)
	case *aarray.Float64:
		return upload(dev, name, a.Float64Values(), valid)
	case *aarray.Boolean:
		v := make([]bool, a.Len())
		for i := range v {
			v[i] = a.Value(i)
		}
		return NewSeriesValid(dev, name, v, valid)
	case *aarray.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		mul := int64(unit.Multiplier())
		v := convert(a.TimestampValues(), func(x arrow.Timestamp) int64 { return int64(x) * mul })
		return timestamps(dev, name, v, valid)
	case *aarray.Date32:
		v := convert(a.Date32Values(), func(x arrow.Date32) int64 { return int64(x) * 86400e9 })
		return timestamps(dev, name, v, valid)
	case *aarray.Date64:
		v := convert(a.Date64Values(), func(x arrow.Date64) int64 { return int64(x) * 1e6 })
		return timestamps(dev, name, v, valid)
	case *aarray.String:
		s := &Series{name: name, kind: String, n: a.Len(), dev: dev, codes: &codesCache{}}
		offs := a.ValueOffsets()
		s.offs = convert(offs, func(x int32) int64 { return int64(x - offs[0]) })
		s.bytes = slices.Clone(a.ValueBytes()[offs[0]:offs[len(offs)-1]])
		return withValid(s, valid)
	case *aarray.LargeString:
		s := &Series{name: name, kind: String, n: a.Len(), dev: dev, codes: &codesCache{}}
		offs := a.ValueOffsets()
		s.offs = convert(offs, func(x int64) int64 { return x - offs[0] })
		s.bytes = slices.Clone(a.ValueBytes()[offs[0]:offs[len(offs)-1]])
		return withValid(s, valid)
	case *aarray.Dictionary:
		var words []string
		switch dict := a.Dictionary().(type) {
		case *aarray.String:
			words = make([]string, dict.Len())
			for i := range words {
				words[i] = dict.Value(i)
			}
		case *aarray.LargeString:
			words = make([]string, dict.Len())
			for i := range words {
				words[i] = dict.Value(i)
			}
		default:
			return nil, errorf(op, ErrType, "column %q: dictionary of %v; only string dictionaries are supported", name, a.Dictionary().DataType())
		}
		codes := make([]int32, a.Len())
		for i := range codes {
			if valid == nil || valid[i] {
				k := a.GetValueIndex(i)
				if k < 0 || k >= len(words) {
					return nil, errorf(op, ErrFormat, "column %q: dictionary index %d out of range at row %d", name, k, i)
				}
				codes[i] = int32(k)
			}
		}
		s, err := NewSeriesValid(dev, name, codes, valid)
		if err != nil {
			return nil, err
		}
		s.kind, s.dict = Categorical, words
		return s, nil
	case *aarray.Null:
		return NewSeriesValid(dev, name, make([]float64, a.Len()), make([]bool, a.Len()))
	}
	return nil, errorf(op, ErrType, "column %q: unsupported Arrow type %v", name, c.DataType())
}

func timestamps(dev *gocu.Device, name string, ns []int64, valid []bool) (*Series, error) {
	s, err := NewSeriesValid(dev, name, ns, valid)
	if err != nil {
		return nil, err
	}
	s.kind = Timestamp
	return s, nil
}

func withValid(s *Series, valid []bool) (*Series, error) {
	if valid != nil {
		s.valid = array.FromSliceOn(s.dev, valid)
		if err := s.valid.Err(); err != nil {
			return nil, wrapErr("FromRecord", ErrValue, err, "column %q", s.name)
		}
	}
	return s, nil
}

// Record returns the frame as an Arrow record batch (the caller releases
// it). Numbers keep their dtype (float16 and bfloat16 become float32, the
// 8-bit floats too), timestamps are nanoseconds in UTC, strings large
// strings and categoricals string dictionaries with int32 indices.
func (f *Frame) Record() (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	fields := make([]arrow.Field, len(f.cols))
	cols := make([]arrow.Array, len(f.cols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, s := range f.cols {
		a, err := s.arrow(mem)
		if err != nil {
			return nil, err
		}
		cols[i] = a
		fields[i] = arrow.Field{Name: s.name, Type: a.DataType(), Nullable: true}
	}
	return aarray.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(f.n)), nil
}

func (s *Series) arrow(mem memory.Allocator) (arrow.Array, error) {
	const op = "Record"
	valid, err := s.validHost()
	if err != nil {
		return nil, wrapErr(op, ErrValue, err, "column %q", s.name)
	}
	if s.valid == nil {
		valid = nil
	}
	switch s.kind {
	case String:
		b := aarray.NewLargeStringBuilder(mem)
		defer b.Release()
		b.Reserve(s.n)
		b.ReserveData(int(s.offs[s.n] - s.offs[0]))
		for i := 0; i < s.n; i++ {
			if valid != nil && !valid[i] {
				b.AppendNull()
				continue
			}
			b.BinaryBuilder.Append(s.bytes[s.offs[i]:s.offs[i+1]])
		}
		return b.NewArray(), nil
	case Categorical:
		codes, err := s.data.Int32s()
		if err != nil {
			return nil, wrapErr(op, ErrValue, err, "column %q", s.name)
		}
		db := aarray.NewStringBuilder(mem)
		defer db.Release()
		db.AppendValues(s.dict, nil)
		dict := db.NewArray()
		defer dict.Release()
		ib := aarray.NewInt32Builder(mem)
		defer ib.Release()
		ib.AppendValues(codes, valid)
		idx := ib.NewArray()
		defer idx.Release()
		typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
		return aarray.NewDictionaryArray(typ, idx, dict), nil
	case Timestamp:
		v, err := s.data.Int64s()
		if err != nil {
			return nil, wrapErr(op, ErrValue, err, "column %q", s.name)
		}
		b := aarray.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"})
		defer b.Release()
		b.AppendValues(convert(v, func(x int64) arrow.Timestamp { return arrow.Timestamp(x) }), valid)
		return b.NewArray(), nil
	}
	var a arrow.Array
	switch dt := s.data.DType(); dt {
	case array.Bool:
		a, err = build(s.data.Bools, valid, aarray.NewBooleanBuilder(mem))
	case array.Int8:
		a, err = build(s.data.Int8s, valid, aarray.NewInt8Builder(mem))
	case array.Uint8:
		a, err = build(s.data.Uint8s, valid, aarray.NewUint8Builder(mem))
	case array.Int32:
		a, err = build(s.data.Int32s, valid, aarray.NewInt32Builder(mem))
	case array.Int64:
		a, err = build(s.data.Int64s, valid, aarray.NewInt64Builder(mem))
	case array.Float64:
		a, err = build(s.data.Float64s, valid, aarray.NewFloat64Builder(mem))
	case array.Float32, array.Float16, array.BFloat16, array.Float8E4M3, array.Float8E5M2:
		a, err = build(s.data.Float32s, valid, aarray.NewFloat32Builder(mem))
	default:
		return nil, errorf(op, ErrType, "column %q: dtype %v has no Arrow type here", s.name, dt)
	}
	if err != nil {
		return nil, wrapErr(op, ErrValue, err, "column %q", s.name)
	}
	return a, nil
}

type appender[T any] interface {
	AppendValues([]T, []bool)
	NewArray() arrow.Array
	Release()
}

func build[T any, B appender[T]](get func() ([]T, error), valid []bool, b B) (arrow.Array, error) {
	defer b.Release()
	v, err := get()
	if err != nil {
		return nil, err
	}
	b.AppendValues(v, valid)
	return b.NewArray(), nil
}

// recovered turns a panic inside arrow-go into an ErrFormat error.
func recovered(op string, err *error) {
	if r := recover(); r != nil {
		*err = errorf(op, ErrFormat, "malformed input: %v", r)
	}
}
