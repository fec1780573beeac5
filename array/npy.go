package array

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// NumPy's .npy format (format versions 1.0, 2.0 and 3.0): a magic string,
// a little-endian header length, a Python dict literal with 'descr',
// 'fortran_order' and 'shape', then the raw data. Files in C or Fortran
// order and of either byte order load; files are written in C order,
// little-endian, version 1.0 (2.0 when the header needs it).

var npyMagic = []byte("\x93NUMPY")

// npyDescr are the dtypes' descr strings. NumPy has no bfloat16: a
// bfloat16 array is written as ml_dtypes writes one with np.save, the
// 2-byte void '<V2' holding the bits (load it with
// np.load(f).view(ml_dtypes.bfloat16)), and a '<V2' or '|V2' file reads as
// bfloat16. The 8-bit floats have no descr that tells E4M3 from E5M2 (both
// would be 'V1'): writing one is an error that says to write
// x.AsType(Float16), which holds every 8-bit float exactly.
var npyDescr = map[DType]string{Bool: "|b1", Uint8: "|u1", Int32: "<i4", Int64: "<i8", Float32: "<f4", Float64: "<f8",
	Int8: "|i1", Int16: "<i2", Uint16: "<u2", Uint32: "<u4", Uint64: "<u8", Float16: "<f2", BFloat16: "<V2", Complex64: "<c8", Complex128: "<c16"}

// WriteNPY writes the array in .npy format (an 8-bit float array is an
// ErrDType error: NumPy has no such type; write x.AsType(Float16)).
func (a *Array) WriteNPY(w io.Writer) error {
	if _, ok := npyDescr[a.DType()]; !ok && a.DType().Valid() {
		return errorf("WriteNPY", ErrDType, "NumPy has no %v type and .npy cannot tell the 8-bit float formats apart: write x.AsType(array.Float16), which holds every %v value exactly", a.dt, a.dt)
	}
	size, src := a.dt.Size(), a
	if a.dt.IsComplex() {
		// The parts, (re, im) pairs as NumPy stores them.
		src = a.ViewAsReal()
		defer src.Close()
		size = src.dt.Size()
	}
	h, err := src.hostData("WriteNPY")
	if err != nil {
		return err
	}
	shape := make([]string, len(a.shape))
	for i, d := range a.shape {
		shape[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(shape, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", npyDescr[a.dt], tuple)
	major, lenSize := byte(1), 2
	total := len(npyMagic) + 2 + lenSize + len(dict) + 1
	if total+63 > 65535+len(npyMagic)+4 {
		major, lenSize = 2, 4
		total = len(npyMagic) + 2 + lenSize + len(dict) + 1
	}
	pad := (64 - total%64) % 64
	header := dict + strings.Repeat(" ", pad) + "\n"
	var buf bytes.Buffer
	buf.Write(npyMagic)
	buf.Write([]byte{major, 0})
	if lenSize == 2 {
		binary.Write(&buf, binary.LittleEndian, uint16(len(header)))
	} else {
		binary.Write(&buf, binary.LittleEndian, uint32(len(header)))
	}
	buf.WriteString(header)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return &Error{Op: "WriteNPY", Kind: ErrValue, Msg: "write failed", Cause: err}
	}
	raw := rawBytes(h)
	if !littleEndian {
		raw = append([]byte(nil), raw...)
		swapBytes(raw, size)
	}
	if _, err := w.Write(raw); err != nil {
		return &Error{Op: "WriteNPY", Kind: ErrValue, Msg: "write failed", Cause: err}
	}
	return nil
}

// SaveNPY writes the array to a .npy file.
func (a *Array) SaveNPY(path string) error {
	if err := a.Err(); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return &Error{Op: "SaveNPY", Kind: ErrValue, Msg: "cannot create file", Cause: err}
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = a.WriteNPY(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if _, ok := err.(*Error); err != nil && !ok {
		return &Error{Op: "SaveNPY", Kind: ErrValue, Msg: "write failed", Cause: err}
	}
	return err
}

// ReadNPY reads an array in .npy format onto the device. The data size the
// header promises is checked before anything is allocated for it: against
// an int's range and the device's memory, against what follows the header
// where the reader's length is known (a file, bytes.Reader,
// strings.Reader, bytes.Buffer), and otherwise by reading in bounded chunks
// that fail at the end of the stream, so a forged header cannot exhaust
// memory.
func (m *Maker) ReadNPY(r io.Reader) (*Array, error) {
	return m.readNPY("ReadNPY", r, remaining(r))
}

// npyChunk is the most bytes of data read (and allocated) at a time.
const npyChunk = 4 << 20

// npyMaxDims is NumPy's limit on the number of dimensions.
const npyMaxDims = 64

// remaining returns how many bytes r can still give, or -1 if unknown.
func remaining(r io.Reader) int64 {
	switch v := r.(type) {
	case *bytes.Reader:
		return int64(v.Len())
	case *strings.Reader:
		return int64(v.Len())
	case *bytes.Buffer:
		return int64(v.Len())
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return max(fi.Size()-off, 0)
	}
	return -1
}

// readNPY reads a .npy stream of which avail bytes remain (-1: unknown).
func (m *Maker) readNPY(op string, r io.Reader, avail int64) (*Array, error) {
	bad := func(format string, args ...any) (*Array, error) {
		return nil, errorf(op, ErrValue, format, args...)
	}
	if err := m.check(op); err != nil {
		return nil, err
	}
	if r == nil {
		return bad("nil reader")
	}
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, &Error{Op: op, Kind: ErrValue, Msg: "truncated header", Cause: err}
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return bad("not a .npy file (bad magic %q)", pre[:6])
	}
	var hlen int
	lenSize := 2
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return bad("truncated header")
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return bad("truncated header")
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
		lenSize = 4
	default:
		return bad("unsupported format version %d.%d", pre[6], pre[7])
	}
	if hlen > 1<<24 {
		return bad("header of %d bytes is too large", hlen)
	}
	consumed := int64(len(pre) + lenSize + hlen)
	if avail >= 0 && consumed > avail {
		return bad("truncated header: it claims %d bytes, the input has %d", hlen, avail-int64(len(pre)+lenSize))
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return bad("truncated header")
	}
	descr, fortran, shape, err := parseNPYHeader(string(hb))
	if err != nil {
		var de *npyDTypeError
		if errors.As(err, &de) {
			return nil, valueToo(errorf(op, ErrDType, "%v", err))
		}
		return bad("%v", err)
	}
	var dt DType
	swap := false
	if len(descr) == 3 || len(descr) == 4 {
		for k, v := range npyDescr {
			if v[1:] == descr[1:] {
				dt = k
			}
		}
		switch descr[0] {
		case '|', '=':
		case '<':
			swap = !littleEndian && dt.Size() > 1
		case '>':
			swap = littleEndian && dt.Size() > 1
		default:
			dt = 0
		}
	}
	if !dt.Valid() {
		if len(descr) == 3 && descr[1:] == "V1" {
			return bad("dtype %q is one byte of unknown type (an 8-bit float saved through ml_dtypes?): gocu cannot tell float8 e4m3 from e5m2; save it as float16", descr)
		}
		return bad("unsupported dtype %q (gocu reads bool, uint8, int8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64, complex64, complex128, and '<V2' as bfloat16)", descr)
	}
	if fortran {
		rev := make([]int, len(shape))
		for i, s := range shape {
			rev[len(shape)-1-i] = s
		}
		shape = rev
	}
	if err := checkShape(op, dt, shape); err != nil {
		return nil, err
	}
	cdt := Invalid
	if dt.IsComplex() {
		// Read the parts, then view them as complex values.
		cdt, dt = dt, dt.component()
		shape = append(shape, 2)
	}
	n := backend.Size(shape)
	size := int64(n) * int64(dt.Size())
	if avail >= 0 && size > avail-consumed {
		return bad("truncated data: the header's shape %s of %v promises %d bytes (%s), but %d follow the header",
			shapeString(shape), dt, size, bytesString(int(size)), avail-consumed)
	}

	// Read the data in chunks of at most npyChunk bytes. Where the length
	// was known the device memory is allocated first and each chunk written
	// as it arrives; from a stream the chunks are kept until the last one
	// has arrived, so memory grows only with data that really exists.
	var st *storage
	if avail >= 0 {
		if st, err = m.alloc(op, dt, shape); err != nil {
			return nil, err
		}
	} else if err := checkHostAlloc(op, dt, shape); err != nil {
		return nil, err
	}
	per := npyChunk / dt.Size()
	var chunks []any
	for off := 0; off < n; off += per {
		k := min(per, n-off)
		h := makeHost(dt, k)
		raw := rawBytes(h)
		if dt == Bool {
			raw = make([]byte, k)
		}
		if got, err := io.ReadFull(r, raw); err != nil {
			if st != nil {
				st.release()
			}
			return nil, &Error{Op: op, Kind: ErrValue, Cause: err,
				Msg: fmt.Sprintf("truncated data: the header's shape %s of %v promises %d bytes (%s), the input ended after %d",
					shapeString(shape), dt, size, bytesString(int(size)), int64(off)*int64(dt.Size())+int64(got))}
		}
		if dt == Bool {
			for i, v := range raw {
				h.([]bool)[i] = v != 0
			}
		}
		if swap {
			swapBytes(raw, dt.Size())
		}
		if st == nil {
			chunks = append(chunks, h)
			continue
		}
		if err := m.be.Write(st.buf, off, h); err != nil {
			st.release()
			return nil, deviceErr(op, err)
		}
	}
	if st == nil {
		if st, err = m.alloc(op, dt, shape); err != nil {
			return nil, err
		}
		for i, h := range chunks {
			if err := m.be.Write(st.buf, i*per, h); err != nil {
				st.release()
				return nil, deviceErr(op, err)
			}
		}
	}
	a := m.wrap(st, backend.Contiguous(shape), dt)
	if cdt.Valid() {
		c := a.ViewAsComplex()
		a.Close()
		if err := c.Err(); err != nil {
			return nil, err
		}
		a = c
	}
	if fortran && len(a.shape) > 1 {
		t := a.Transpose()
		a.Close()
		return t, t.Err()
	}
	return a, nil
}

// ReadNPY reads a .npy stream onto the default device.
func ReadNPY(r io.Reader) (*Array, error) { return Default().ReadNPY(r) }

// LoadNPY reads a .npy file onto the default device; the header's shape is
// checked against the file's size before anything is allocated for it.
func LoadNPY(path string) (*Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Op: "LoadNPY", Kind: ErrValue, Msg: "cannot open file", Cause: err}
	}
	defer f.Close()
	avail := remaining(f)
	return Default().readNPY("LoadNPY", bufio.NewReaderSize(f, 1<<20), avail)
}

// parseNPYHeader reads the dict literal {'descr': ..., 'fortran_order':
// ..., 'shape': (...), } in any key order.
// npyDTypeError is a header's structured or sub-array dtype.
type npyDTypeError struct{ descr string }

func (e *npyDTypeError) Error() string {
	return fmt.Sprintf("unsupported dtype %s: structured and sub-array dtypes are not supported (gocu reads bool, uint8, int8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64, and '<V2' as bfloat16)", e.descr)
}

// closingBracket returns the index in s of the bracket that closes s[0] ('(' or
// '['), skipping quoted strings, or -1.
func closingBracket(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func parseNPYHeader(h string) (descr string, fortran bool, shape []int, err error) {
	h = strings.TrimSpace(h)
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "}") {
		return "", false, nil, fmt.Errorf("header %q is not a dict", h)
	}
	body := h[1 : len(h)-1]
	seen := map[string]bool{}
	for len(strings.TrimSpace(body)) > 0 {
		body = strings.TrimLeft(body, " ,")
		if body == "" {
			break
		}
		q := body[0]
		if q != '\'' && q != '"' {
			return "", false, nil, fmt.Errorf("bad key in header %q", h)
		}
		end := strings.IndexByte(body[1:], q)
		if end < 0 {
			return "", false, nil, fmt.Errorf("unterminated key in header %q", h)
		}
		key := body[1 : 1+end]
		body = strings.TrimLeft(body[2+end:], " ")
		if !strings.HasPrefix(body, ":") {
			return "", false, nil, fmt.Errorf("missing ':' after %q", key)
		}
		body = strings.TrimLeft(body[1:], " ")
		var val string
		switch {
		case strings.HasPrefix(body, "(") || strings.HasPrefix(body, "["):
			// A tuple (shape), or a list or tuple describing a structured
			// or sub-array dtype: up to the bracket that closes it.
			e := closingBracket(body)
			if e < 0 {
				return "", false, nil, fmt.Errorf("unterminated %c for %q", body[0], key)
			}
			val, body = body[:e+1], body[e+1:]
		case strings.HasPrefix(body, "'") || strings.HasPrefix(body, "\""):
			e := strings.IndexByte(body[1:], body[0])
			if e < 0 {
				return "", false, nil, fmt.Errorf("unterminated string for %q", key)
			}
			val, body = body[1:1+e], body[2+e:]
		default:
			e := strings.IndexAny(body, ",}")
			if e < 0 {
				e = len(body)
			}
			val, body = strings.TrimSpace(body[:e]), body[e:]
		}
		seen[key] = true
		switch key {
		case "descr":
			if strings.HasPrefix(val, "[") || strings.HasPrefix(val, "(") {
				return "", false, nil, &npyDTypeError{val}
			}
			descr = val
		case "fortran_order":
			switch val {
			case "True":
				fortran = true
			case "False":
			default:
				return "", false, nil, fmt.Errorf("bad fortran_order %q", val)
			}
		case "shape":
			inner := strings.Trim(val, "()")
			shape = []int{}
			for _, f := range strings.Split(inner, ",") {
				f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
				if f == "" {
					continue
				}
				v, err := strconv.Atoi(f)
				if err != nil || v < 0 {
					return "", false, nil, fmt.Errorf("bad shape %q", val)
				}
				if len(shape) == npyMaxDims {
					return "", false, nil, fmt.Errorf("shape %q has more than %d dimensions", val, npyMaxDims)
				}
				shape = append(shape, v)
			}
		}
	}
	if !seen["descr"] || !seen["shape"] || !seen["fortran_order"] {
		return "", false, nil, fmt.Errorf("header %q lacks descr, fortran_order or shape", h)
	}
	return descr, fortran, shape, nil
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// rawBytes views a host slice's memory as bytes.
func rawBytes(h any) []byte {
	var p unsafe.Pointer
	var n int
	switch d := h.(type) {
	case []bool:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), len(d)
	case []uint8:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), len(d)
	case []int32:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 4*len(d)
	case []int64:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 8*len(d)
	case []float32:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 4*len(d)
	case []float64:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 8*len(d)
	case []int8:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), len(d)
	case []int16:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 2*len(d)
	case []uint16:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 2*len(d)
	case []uint32:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 4*len(d)
	case []uint64:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 8*len(d)
	case []lowp.Float16:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 2*len(d)
	case []lowp.BFloat16:
		p, n = unsafe.Pointer(unsafe.SliceData(d)), 2*len(d)
	}
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		for j := 0; j < size/2; j++ {
			b[i+j], b[i+size-1-j] = b[i+size-1-j], b[i+j]
		}
	}
}
