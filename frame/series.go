package frame

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// Kind is what a column holds.
type Kind uint8

const (
	// Number: numbers or booleans in an array of any array dtype.
	Number Kind = iota
	// Timestamp: int64 nanoseconds since the Unix epoch, UTC.
	Timestamp
	// String: UTF-8 strings in Arrow's large-string layout (offsets and
	// bytes, on the host).
	String
	// Categorical: int32 codes into a dictionary of strings.
	Categorical
)

func (k Kind) String() string {
	switch k {
	case Number:
		return "number"
	case Timestamp:
		return "timestamp"
	case String:
		return "string"
	case Categorical:
		return "categorical"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Series is one named column: its values and which of them are present.
// Series are immutable: operations return new ones, which may share
// memory with their inputs.
type Series struct {
	name  string
	kind  Kind
	n     int
	dev   *gocu.Device
	data  *array.Array // Number, Timestamp (int64), Categorical (int32 codes)
	valid *array.Array // Bool, true where a value is present; nil: no nulls
	offs  []int64      // String: n+1 offsets into bytes
	bytes []byte
	dict  []string // Categorical

	// codes caches the encoding in a sorted dictionary of a string or
	// categorical column; views that share the values share it.
	codes *codesCache
}

type codesCache struct {
	once sync.Once
	s    *Series
	err  error
}

// Name returns the column's name.
func (s *Series) Name() string { return s.name }

// Len returns the number of rows.
func (s *Series) Len() int { return s.n }

// Kind returns what the column holds.
func (s *Series) Kind() Kind { return s.kind }

// Device returns the device the column's arrays live on.
func (s *Series) Device() *gocu.Device { return s.dev }

// DType returns the dtype of the column's array: the values' for numbers,
// Int64 for timestamps, Int32 (the codes) for categoricals and Invalid for
// strings, which have no array.
func (s *Series) DType() array.DType {
	if s.data == nil {
		return array.Invalid
	}
	return s.data.DType()
}

// Data returns the column's values (the codes of a categorical), or nil for
// a string column. Where a value is null the array holds an unspecified
// value.
func (s *Series) Data() *array.Array { return s.data }

// Valid returns the column's validity as a Bool array, true where a value
// is present, or nil when the column has no nulls.
func (s *Series) Valid() *array.Array { return s.valid }

// Dictionary returns a categorical column's dictionary.
func (s *Series) Dictionary() []string { return s.dict }

// Rename returns the column under another name, sharing its memory.
func (s *Series) Rename(name string) *Series {
	c := *s
	c.name = name
	return &c
}

// NullCount returns the number of nulls; it reads from the device.
func (s *Series) NullCount() (int, error) {
	if s.valid == nil {
		return 0, nil
	}
	v, err := array.ItemOf[int64](s.valid.LogicalNot().Sum())
	return int(v), err
}

// NewSeries returns a column named name on dev holding a copy of data, one
// of []float64, []float32, []int64, []int32, []int8, []uint8, []bool,
// []string or []time.Time, without nulls.
func NewSeries(dev *gocu.Device, name string, data any) (*Series, error) {
	return NewSeriesValid(dev, name, data, nil)
}

// NewSeriesValid is NewSeries with nulls where valid is false (valid may
// be nil: no nulls).
func NewSeriesValid(dev *gocu.Device, name string, data any, valid []bool) (*Series, error) {
	const op = "NewSeries"
	if dev == nil {
		return nil, errorf(op, ErrValue, "nil device")
	}
	s := &Series{name: name, dev: dev}
	switch d := data.(type) {
	case []float64:
		s.data, s.n = array.FromSliceOn(dev, d), len(d)
	case []float32:
		s.data, s.n = array.FromSliceOn(dev, d), len(d)
	case []int64:
		s.data, s.n = array.FromSliceOn(dev, d), len(d)
	case []int32:
		s.data, s.n = array.FromSliceOn(dev, d), len(d)
	case []int8:
		s.data, s.n = array.FromSliceOn(dev, d), len(d)
	case []uint8:
		s.data, s.n = array.FromSliceOn(dev, d), len(d)
	case []bool:
		s.data, s.n = array.FromSliceOn(dev, d), len(d)
	case []time.Time:
		ns := make([]int64, len(d))
		for i, t := range d {
			ns[i] = t.UnixNano()
		}
		s.kind, s.n = Timestamp, len(d)
		s.data = array.FromSliceOn(dev, ns)
	case []string:
		s.kind, s.n, s.codes = String, len(d), &codesCache{}
		s.offs = make([]int64, len(d)+1)
		for i, x := range d {
			s.bytes = append(s.bytes, x...)
			s.offs[i+1] = int64(len(s.bytes))
		}
	default:
		return nil, errorf(op, ErrType, "column %q: cannot hold %T", name, data)
	}
	if s.data != nil {
		if err := s.data.Err(); err != nil {
			return nil, wrapErr(op, ErrValue, err, "column %q", name)
		}
	}
	if valid != nil {
		if len(valid) != s.n {
			return nil, errorf(op, ErrLength, "column %q: %d values and %d validity flags", name, s.n, len(valid))
		}
		if slices.Contains(valid, false) {
			s.valid = array.FromSliceOn(dev, valid)
		}
	}
	return s, nil
}

// NewCategorical returns a dictionary-encoded column of values (nulls where
// valid is false; valid may be nil). The dictionary holds the distinct
// values in sorted order, so codes compare as the strings do.
func NewCategorical(dev *gocu.Device, name string, values []string, valid []bool) (*Series, error) {
	s, err := NewSeriesValid(dev, name, values, valid)
	if err != nil {
		return nil, err
	}
	return s.dictEncode()
}

// FromArray returns a column over the 1-D array data (not copied), with
// nulls where the Bool array valid is false (valid may be nil).
func FromArray(name string, data, valid *array.Array) (*Series, error) {
	const op = "FromArray"
	if data == nil {
		return nil, errorf(op, ErrValue, "column %q: nil array", name)
	}
	if err := data.Err(); err != nil {
		return nil, wrapErr(op, ErrValue, err, "column %q", name)
	}
	if data.Ndim() != 1 {
		return nil, errorf(op, ErrValue, "column %q: array of shape %v is not 1-D", name, data.Shape())
	}
	if dt := data.DType(); !dt.Valid() || dt == array.Complex64 || dt == array.Complex128 {
		return nil, errorf(op, ErrType, "column %q: dtype %v", name, data.DType())
	}
	s := &Series{name: name, n: data.Size(), dev: data.Device(), data: data}
	if valid != nil {
		if valid.DType() != array.Bool || valid.Ndim() != 1 || valid.Size() != s.n {
			return nil, errorf(op, ErrLength, "column %q: validity must be a Bool array of %d values, got %v %v", name, s.n, valid.DType(), valid.Shape())
		}
		s.valid = valid
	}
	return s, nil
}

// Strings returns a string or categorical column's values and whether each
// is present; it reads from the device.
func (s *Series) Strings() ([]string, []bool, error) {
	valid, err := s.validHost()
	if err != nil {
		return nil, nil, err
	}
	out := make([]string, s.n)
	switch s.kind {
	case String:
		for i := range out {
			out[i] = string(s.bytes[s.offs[i]:s.offs[i+1]])
		}
	case Categorical:
		codes, err := s.data.Int32s()
		if err != nil {
			return nil, nil, err
		}
		for i, c := range codes {
			if valid[i] && c >= 0 && int(c) < len(s.dict) {
				out[i] = s.dict[c]
			}
		}
	default:
		return nil, nil, errorf("Strings", ErrType, "column %q is a %v column", s.name, s.kind)
	}
	return out, valid, nil
}

// Float64s returns a number or timestamp column's values as float64 and
// whether each is present; it reads from the device.
func (s *Series) Float64s() ([]float64, []bool, error) {
	if s.kind != Number && s.kind != Timestamp {
		return nil, nil, errorf("Float64s", ErrType, "column %q is a %v column", s.name, s.kind)
	}
	v, err := s.data.Float64s()
	if err != nil {
		return nil, nil, err
	}
	valid, err := s.validHost()
	return v, valid, err
}

// Int64s returns a number or timestamp column's values as int64 (floats
// truncated) and whether each is present; it reads from the device.
func (s *Series) Int64s() ([]int64, []bool, error) {
	if s.kind != Number && s.kind != Timestamp {
		return nil, nil, errorf("Int64s", ErrType, "column %q is a %v column", s.name, s.kind)
	}
	v, err := s.data.Int64s()
	if err != nil {
		return nil, nil, err
	}
	valid, err := s.validHost()
	return v, valid, err
}

// validHost returns the validity as a Go slice (all true without nulls).
func (s *Series) validHost() ([]bool, error) {
	if s.valid == nil {
		v := make([]bool, s.n)
		for i := range v {
			v[i] = true
		}
		return v, nil
	}
	return s.valid.Bools()
}

// dictEncode turns a string column into a categorical one with a sorted
// dictionary; a categorical column gets its dictionary sorted.
func (s *Series) dictEncode() (*Series, error) {
	if s.kind == Categorical {
		return s.sortDict()
	}
	strs, valid, err := s.Strings()
	if err != nil {
		return nil, err
	}
	set := map[string]int32{}
	for i, x := range strs {
		if valid[i] {
			set[x] = 0
		}
	}
	dict := make([]string, 0, len(set))
	for x := range set {
		dict = append(dict, x)
	}
	sort.Strings(dict)
	for i, x := range dict {
		set[x] = int32(i)
	}
	codes := make([]int32, s.n)
	for i, x := range strs {
		if valid[i] {
			codes[i] = set[x]
		}
	}
	c := &Series{name: s.name, kind: Categorical, n: s.n, dev: s.dev, valid: s.valid, dict: dict}
	c.data = array.FromSliceOn(s.dev, codes)
	return c, c.data.Err()
}

// sortedCodes returns a string or categorical column encoded in a sorted
// dictionary, encoding it once.
func (s *Series) sortedCodes() (*Series, error) {
	if s.kind == Categorical && slices.IsSorted(s.dict) && !hasDup(s.dict) {
		return s, nil
	}
	if s.codes == nil {
		return s.dictEncode()
	}
	s.codes.once.Do(func() { s.codes.s, s.codes.err = s.dictEncode() })
	return s.codes.s, s.codes.err
}

func hasDup(d []string) bool {
	for i := 1; i < len(d); i++ {
		if d[i] == d[i-1] {
			return true
		}
	}
	return false
}

// take gathers the rows at the int64 indices idx (a device array); rows
// where null (a Bool array, or nil) is true become null.
func (s *Series) take(idx, null *array.Array) (*Series, error) {
	const op = "take"
	c := *s
	c.n = idx.Size()
	c.codes = &codesCache{}
	var valid *array.Array
	if s.valid != nil {
		valid = s.valid.Take(idx, 0)
	}
	if null != nil {
		nn := null.LogicalNot()
		if valid != nil {
			valid = valid.LogicalAnd(nn)
		} else {
			valid = nn
		}
	}
	c.valid = valid
	if s.kind == String {
		ix, err := idx.Int64s()
		if err != nil {
			return nil, wrapErr(op, ErrValue, err, "column %q", s.name)
		}
		// Lengths, their running sum, then the bytes: the first and last
		// passes on all cores.
		offs := make([]int64, len(ix)+1)
		hostChunks(len(ix), func(lo, hi int) {
			for k := lo; k < hi; k++ {
				i := ix[k]
				offs[k+1] = s.offs[i+1] - s.offs[i]
			}
		})
		for k := range ix {
			offs[k+1] += offs[k]
		}
		b := make([]byte, offs[len(ix)])
		hostChunks(len(ix), func(lo, hi int) {
			for k := lo; k < hi; k++ {
				i := ix[k]
				copy(b[offs[k]:offs[k+1]], s.bytes[s.offs[i]:s.offs[i+1]])
			}
		})
		c.offs, c.bytes = offs, b
	} else {
		c.data = s.data.Take(idx, 0)
	}
	if c.data != nil {
		if err := c.data.Err(); err != nil {
			return nil, wrapErr(op, ErrValue, err, "column %q", s.name)
		}
	}
	return &c, nil
}

// slice returns rows i to j.
func (s *Series) slice(i, j int) *Series {
	c := *s
	c.n = j - i
	c.codes = &codesCache{}
	if s.data != nil {
		c.data = s.data.Slice(array.S(i, j))
	}
	if s.valid != nil {
		c.valid = s.valid.Slice(array.S(i, j))
	}
	if s.kind == String {
		c.offs = s.offs[i : j+1]
	}
	return &c
}

// sortDict re-encodes a categorical column in its dictionary sorted and
// without duplicates: the dictionary is sorted on the host, the codes
// mapped on the device.
func (s *Series) sortDict() (*Series, error) {
	dict := slices.Clone(s.dict)
	sort.Strings(dict)
	dict = slices.Compact(dict)
	c := &Series{name: s.name, kind: Categorical, n: s.n, dev: s.dev, valid: s.valid, dict: dict, data: s.data}
	if len(s.dict) > 0 {
		remap := make([]int32, len(s.dict))
		for i, w := range s.dict {
			k, _ := slices.BinarySearch(dict, w)
			remap[i] = int32(k)
		}
		c.data = array.FromSliceOn(s.dev, remap).Take(s.data, 0)
	}
	return c, c.data.Err()
}
