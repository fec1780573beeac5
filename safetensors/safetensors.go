package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/lowp"
)

// MaxHeader is the largest header accepted, as the reference
// implementation's: 100 MB.
const MaxHeader = 100_000_000

// ErrFormat is wrapped by every error about a malformed file.
var ErrFormat = errors.New("safetensors: malformed file")

// Tensor is one named array of a file.
type Tensor struct {
	Name  string
	Array *array.Array
}

// File is what Read returns: the tensors in the order of their data in
// the file, and the header's metadata.
type File struct {
	Tensors  []Tensor
	Metadata map[string]string
}

// Get returns the array named name, or nil.
func (f *File) Get(name string) *array.Array {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t.Array
		}
	}
	return nil
}

// dtypes maps the format's dtype names to array's; the others (F8_E8M0,
// F6_*, F4, C64) are valid in a file but have no array dtype. The format's F8_E4M3 is the "e4m3fn" variant, as array's.
var dtypes = map[string]array.DType{
	"BOOL": array.Bool, "U8": array.Uint8, "I8": array.Int8, "I16": array.Int16, "U16": array.Uint16,
	"I32": array.Int32, "U32": array.Uint32, "U64": array.Uint64,
	"I64": array.Int64, "F16": array.Float16, "BF16": array.BFloat16,
	"F32": array.Float32, "F64": array.Float64,
	"F8_E4M3": array.Float8E4M3, "F8_E5M2": array.Float8E5M2,
}

var otherSizes = map[string]int{"F8_E8M0": 1, "F6_E2M3": 1, "F6_E3M2": 1, "F4": 1, "C64": 8}

func dtypeName(dt array.DType) string {
	for n, d := range dtypes {
		if d == dt {
			return n
		}
	}
	return ""
}

// entry is a tensor's header record.
type entry struct {
	name    string
	DType   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

// Write writes tensors (in the given order, names unique) and metadata
// (may be nil) in the safetensors format: an 8-byte little-endian header
// length, the JSON header padded with spaces to a multiple of 8 bytes, and
// the tensors' little-endian, row-major bytes one after the other. It
// waits for the arrays' values.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			hdr.WriteByte(',')
		}
		first = false
	}
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("safetensors: Write: metadata %q: %q: not valid UTF-8, which the format requires", k, v)
		}
	}
	if len(metadata) > 0 {
		sep()
		hdr.WriteString(`"__metadata__":{`)
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				hdr.WriteByte(',')
			}
			writeJSON(&hdr, k)
			hdr.WriteByte(':')
			writeJSON(&hdr, metadata[k])
		}
		hdr.WriteByte('}')
	}
	datas := make([][]byte, len(tensors))
	seen := map[string]bool{}
	var off int64
	for i, t := range tensors {
		if t.Name == "" || t.Name == "__metadata__" || seen[t.Name] {
			return fmt.Errorf("safetensors: Write: tensor %d: empty, reserved or repeated name %q", i, t.Name)
		}
		if !utf8.ValidString(t.Name) {
			return fmt.Errorf("safetensors: Write: tensor %d: name %q is not valid UTF-8, which the format requires", i, t.Name)
		}
		seen[t.Name] = true
		dt := dtypeName(t.Array.DType())
		if dt == "" {
			if err := t.Array.Err(); err != nil {
				return fmt.Errorf("safetensors: Write %s: %w", t.Name, err)
			}
			return fmt.Errorf("safetensors: Write %s: no safetensors dtype for %v", t.Name, t.Array.DType())
		}
		data, err := hostBytes(t.Array)
		if err != nil {
			return fmt.Errorf("safetensors: Write %s: %w", t.Name, err)
		}
		datas[i] = data
		sep()
		writeJSON(&hdr, t.Name)
		fmt.Fprintf(&hdr, `:{"dtype":"%s","shape":[`, dt)
		for j, d := range t.Array.Shape() {
			if j > 0 {
				hdr.WriteByte(',')
			}
			hdr.WriteString(strconv.Itoa(d))
		}
		fmt.Fprintf(&hdr, `],"data_offsets":[%d,%d]}`, off, off+int64(len(data)))
		off += int64(len(data))
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(hdr.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return err
	}
	for _, d := range datas {
		if _, err := w.Write(d); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(b *bytes.Buffer, s string) {
	j, _ := json.Marshal(s) // a string always marshals
	b.Write(j)
}

// WriteFile writes the tensors to path (through a temporary file in the
// same directory, renamed when complete).
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	f, err := os.CreateTemp(dirOf(path), ".safetensors-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := Write(f, tensors, metadata); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' || path[i] == os.PathSeparator {
			return path[:i+1]
		}
	}
	return "."
}

// Read reads a safetensors file into arrays on dev (nil: array.Default's
// device). It checks everything the format requires and names what is
// wrong (the errors wrap ErrFormat): a header length beyond the file or
// MaxHeader, a header that is not a JSON object of tensor records, unknown
// dtypes, negative dimensions, offsets that do not match the shape's size,
// overlap, leave holes or run past the data, a truncated file. Tensors
// whose dtype array lacks (C64, F8_E8M0, F6, F4) are
// an error that names them.
func Read(r io.Reader, dev *gocu.Device) (*File, error) {
	var n [8]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, formatErr("the file is shorter than the 8-byte header length (%v)", err)
	}
	size := binary.LittleEndian.Uint64(n[:])
	if size > MaxHeader {
		return nil, formatErr("header length %d exceeds %d bytes", size, MaxHeader)
	}
	if size < 2 {
		return nil, formatErr("header length %d is too short for a JSON object", size)
	}
	hdr := make([]byte, size)
	if k, err := io.ReadFull(r, hdr); err != nil {
		return nil, formatErr("truncated header: %d of %d bytes", k, size)
	}
	if !utf8.Valid(hdr) {
		// The reference refuses such a header; decoding it would rewrite
		// names and metadata (as U+FFFD) without a word.
		return nil, formatErr("the header is not valid UTF-8 (at byte %d)", invalidUTF8At(hdr))
	}
	entries, meta, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}
	// The data must be the tensors back to back, in offset order.
	order := slices.Clone(entries)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Offsets[0] < order[j].Offsets[0] })
	var end int64
	for _, e := range order {
		if e.Offsets[0] != end {
			if e.Offsets[0] < end {
				return nil, formatErr("tensor %q overlaps the one before it (data_offsets %v)", e.name, e.Offsets)
			}
			return nil, formatErr("a hole before tensor %q (data_offsets %v, previous end %d)", e.name, e.Offsets, end)
		}
		end = e.Offsets[1]
	}
	// Read what is there (never what the header claims: a forged size
	// must not allocate), then check it against the records.
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	for _, e := range order {
		if e.Offsets[1] > int64(len(data)) {
			return nil, formatErr("truncated data: tensor %q needs bytes %d to %d, the data has %d", e.name, e.Offsets[0], e.Offsets[1], len(data))
		}
	}
	if end != int64(len(data)) {
		return nil, formatErr("%d bytes after the last tensor (the tensors take %d)", int64(len(data))-end, end)
	}
	if dev == nil {
		dev = array.Default().Device()
	}
	f := &File{Metadata: meta}
	for _, e := range order {
		dt, ok := dtypes[e.DType]
		if !ok {
			return nil, fmt.Errorf("safetensors: tensor %q has dtype %s, which package array does not have (it has BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, F8_E4M3, F8_E5M2)", e.name, e.DType)
		}
		shape := make([]int, len(e.Shape))
		for i, d := range e.Shape {
			shape[i] = int(d)
		}
		a := fromBytes(dev, dt, data[e.Offsets[0]:e.Offsets[1]], shape)
		if len(shape) == 0 {
			a = a.Reshape() // 0-d
		}
		if err := a.Err(); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %w", e.name, err)
		}
		f.Tensors = append(f.Tensors, Tensor{Name: e.name, Array: a})
	}
	return f, nil
}

// ReadFile reads the safetensors file at path.
func ReadFile(path string, dev *gocu.Device) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < 8 {
		return nil, fmt.Errorf("%s: %w", path, formatErr("the file has %d bytes, fewer than the 8-byte header length", st.Size()))
	}
	f, err := Read(bufio.NewReaderSize(fh, 1<<20), dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// invalidUTF8At returns the offset of the first byte of b that is not
// valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// parseHeader decodes the JSON header: one object whose keys are tensor
// names (unique) and "__metadata__" (string to string).
func parseHeader(hdr []byte) ([]entry, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, formatErr("the header is not a JSON object")
	}
	var entries []entry
	var meta map[string]string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, formatErr("bad header JSON: %v", err)
		}
		name, ok := t.(string)
		if !ok {
			return nil, nil, formatErr("bad header JSON: key %v", t)
		}
		if seen[name] {
			return nil, nil, formatErr("tensor %q appears twice in the header", name)
		}
		seen[name] = true
		if name == "__metadata__" {
			if err := dec.Decode(&meta); err != nil {
				return nil, nil, formatErr("__metadata__ is not an object of strings: %v", err)
			}
			continue
		}
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, formatErr("tensor %q: not a JSON object: %v", name, err)
		}
		e := entry{name: name}
		for _, f := range []struct {
			key string
			dst any
		}{{"dtype", &e.DType}, {"shape", &e.Shape}, {"data_offsets", &e.Offsets}} {
			v, ok := raw[f.key]
			if !ok {
				return nil, nil, formatErr("tensor %q lacks %q", name, f.key)
			}
			if err := json.Unmarshal(v, f.dst); err != nil {
				return nil, nil, formatErr("tensor %q: bad %q: %s", name, f.key, v)
			}
		}
		if err := e.check(); err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, formatErr("bad header JSON: %v", err)
	}
	if rest := bytes.TrimRight(hdr[dec.InputOffset():], " "); len(rest) > 0 {
		return nil, nil, formatErr("bytes after the header's JSON object")
	}
	return entries, meta, nil
}

// check validates one record on its own: dtype, shape, offsets and size.
func (e entry) check() error {
	size, ok := 0, false
	if dt, known := dtypes[e.DType]; known {
		size, ok = dt.Size(), true
	} else {
		size, ok = otherSizes[e.DType]
	}
	if !ok {
		return formatErr("tensor %q: unknown dtype %q", e.name, e.DType)
	}
	count := int64(1)
	for _, d := range e.Shape {
		if d < 0 {
			return formatErr("tensor %q: negative dimension in shape %v", e.name, e.Shape)
		}
		if d > 0 && count > math.MaxInt64/8/d {
			return formatErr("tensor %q: shape %v is too large", e.name, e.Shape)
		}
		count *= d
	}
	if len(e.Offsets) != 2 || e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] {
		return formatErr("tensor %q: bad data_offsets %v", e.name, e.Offsets)
	}
	if want := count * int64(size); e.Offsets[1]-e.Offsets[0] != want {
		return formatErr("tensor %q: data_offsets %v hold %d bytes, shape %v of %s needs %d", e.name, e.Offsets, e.Offsets[1]-e.Offsets[0], e.Shape, e.DType, want)
	}
	return nil
}

// hostBytes returns an array's elements as little-endian bytes.
func hostBytes(a *array.Array) ([]byte, error) {
	switch a.DType() {
	case array.Bool:
		return le[bool](a)
	case array.Uint8:
		return le[uint8](a)
	case array.Int8:
		return le[int8](a)
	case array.Int16:
		return le[int16](a)
	case array.Uint16:
		return le[uint16](a)
	case array.Uint32:
		return le[uint32](a)
	case array.Uint64:
		return le[uint64](a)
	case array.Int32:
		return le[int32](a)
	case array.Int64:
		return le[int64](a)
	case array.Float16:
		return le[lowp.Float16](a)
	case array.BFloat16:
		return le[lowp.BFloat16](a)
	case array.Float32:
		return le[float32](a)
	case array.Float8E4M3:
		return le[lowp.Float8E4M3](a)
	case array.Float8E5M2:
		return le[lowp.Float8E5M2](a)
	default:
		return le[float64](a)
	}
}

func le[T array.Elem](a *array.Array) ([]byte, error) {
	v, err := array.ToSlice[T](a)
	if err != nil {
		return nil, err
	}
	var z T
	size := int(unsafe.Sizeof(z))
	out := make([]byte, len(v)*size)
	if len(v) == 0 {
		return out, nil
	}
	src := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(out))
	if littleEndian {
		copy(out, src)
		return out, nil
	}
	for i := 0; i < len(out); i += size {
		for j := range size {
			out[i+j] = src[i+size-1-j]
		}
	}
	return out, nil
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// fromBytes makes an array of dt and shape from little-endian bytes.
func fromBytes(dev *gocu.Device, dt array.DType, data []byte, shape []int) *array.Array {
	switch dt {
	case array.Bool:
		v := make([]bool, len(data))
		for i, b := range data {
			v[i] = b != 0
		}
		return array.FromSliceOn(dev, v, shape...)
	case array.Uint8:
		return array.FromSliceOn(dev, slices.Clone(data), shape...)
	case array.Int8:
		return array.FromSliceOn(dev, decode[int8](data), shape...)
	case array.Int16:
		return array.FromSliceOn(dev, decode[int16](data), shape...)
	case array.Uint16:
		return array.FromSliceOn(dev, decode[uint16](data), shape...)
	case array.Uint32:
		return array.FromSliceOn(dev, decode[uint32](data), shape...)
	case array.Uint64:
		return array.FromSliceOn(dev, decode[uint64](data), shape...)
	case array.Int32:
		return array.FromSliceOn(dev, decode[int32](data), shape...)
	case array.Int64:
		return array.FromSliceOn(dev, decode[int64](data), shape...)
	case array.Float16:
		return array.FromSliceOn(dev, decode[lowp.Float16](data), shape...)
	case array.BFloat16:
		return array.FromSliceOn(dev, decode[lowp.BFloat16](data), shape...)
	case array.Float32:
		return array.FromSliceOn(dev, decode[float32](data), shape...)
	case array.Float8E4M3:
		return array.FromSliceOn(dev, decode[lowp.Float8E4M3](data), shape...)
	case array.Float8E5M2:
		return array.FromSliceOn(dev, decode[lowp.Float8E5M2](data), shape...)
	}
	return array.FromSliceOn(dev, decode[float64](data), shape...)
}

func decode[T array.Elem](data []byte) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	v := make([]T, len(data)/size)
	if len(v) == 0 {
		return v
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*size)
	if littleEndian {
		copy(dst, data)
		return v
	}
	for i := 0; i < len(dst); i += size {
		for j := range size {
			dst[i+j] = data[i+size-1-j]
		}
	}
	return v
}
