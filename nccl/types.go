package nccl

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// DataType is an ncclDataType_t: the type of the elements a collective
// moves and reduces.
type DataType int32

// The ncclDataType_t values of nccl.h.
const (
	Int8       DataType = 0
	Uint8      DataType = 1
	Int32      DataType = 2
	Uint32     DataType = 3
	Int64      DataType = 4
	Uint64     DataType = 5
	Float16    DataType = 6  // IEEE half precision
	Float32    DataType = 7  //
	Float64    DataType = 8  //
	BFloat16   DataType = 9  // bfloat16
	Float8E4M3 DataType = 10 // FP8 e4m3 (NCCL 2.24; reductions need sm_90 or newer)
	Float8E5M2 DataType = 11 // FP8 e5m2 (NCCL 2.24; reductions need sm_90 or newer)
)

var dataTypes = [...]struct {
	name string
	size int
}{
	Int8: {"int8", 1}, Uint8: {"uint8", 1}, Int32: {"int32", 4}, Uint32: {"uint32", 4},
	Int64: {"int64", 8}, Uint64: {"uint64", 8}, Float16: {"float16", 2}, Float32: {"float32", 4},
	Float64: {"float64", 8}, BFloat16: {"bfloat16", 2}, Float8E4M3: {"float8_e4m3", 1}, Float8E5M2: {"float8_e5m2", 1},
}

func (t DataType) known() bool { return t >= 0 && int(t) < len(dataTypes) }

// Size returns the size of one element in bytes, 0 for an unknown type.
func (t DataType) Size() int {
	if !t.known() {
		return 0
	}
	return dataTypes[t].size
}

// String returns the type's name, such as "float32" or "bfloat16".
func (t DataType) String() string {
	if !t.known() {
		return fmt.Sprintf("DataType(%d)", int32(t))
	}
	return dataTypes[t].name
}

// check reports an unknown type, or one the loaded NCCL lacks.
func (t DataType) check(fn string, l *lib) error {
	if !t.known() {
		return argErr(fn, "unknown data type %d", int32(t))
	}
	if (t == Float8E4M3 || t == Float8E5M2) && l != nil && !l.atLeast(2, 24) {
		return &ArgError{Func: fn, Msg: fmt.Sprintf("%v needs NCCL 2.24 or newer, this is %d.%d.%d", t, l.major, l.minor, l.patch), Err: ErrNotSupported}
	}
	return nil
}

// Supported reports whether the loaded NCCL knows the type: FP8 needs
// NCCL 2.24 or newer (and reductions of it a GPU of compute capability 9.0
// or newer, which NCCL checks when the collective is called).
func (t DataType) Supported() bool {
	l, err := load()
	return err == nil && t.check("", l) == nil
}

// Elem is the Go types that have an NCCL data type of their own. Float16,
// BFloat16 and the FP8 types have no Go type; name them with the constants.
type Elem interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// TypeOf returns the NCCL data type of T, for generic code:
// TypeOf[float32]() is Float32.
func TypeOf[T Elem]() DataType {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int8:
		return Int8
	case reflect.Uint8:
		return Uint8
	case reflect.Int32:
		return Int32
	case reflect.Uint32:
		return Uint32
	case reflect.Int64:
		return Int64
	case reflect.Uint64:
		return Uint64
	case reflect.Float32:
		return Float32
	default:
		return Float64
	}
}

// RedOp is an ncclRedOp_t: how a reduction combines elements.
type RedOp int32

// The built-in ncclRedOp_t values.
const (
	Sum  RedOp = 0
	Prod RedOp = 1
	Max  RedOp = 2
	Min  RedOp = 3
	Avg  RedOp = 4 // the sum divided by the number of ranks
)

var redOpNames = [...]string{Sum: "sum", Prod: "prod", Max: "max", Min: "min", Avg: "avg"}

// String returns the operation's name, such as "sum".
func (op RedOp) String() string {
	if op < 0 || int(op) >= len(redOpNames) {
		return fmt.Sprintf("RedOp(%d)", int32(op))
	}
	return redOpNames[op]
}

func (op RedOp) check(fn string) error {
	if op < 0 || int(op) >= len(redOpNames) {
		return argErr(fn, "unknown reduction %d", int32(op))
	}
	return nil
}

const idBytes = 128 // NCCL_UNIQUE_ID_BYTES

// UniqueID is an ncclUniqueId: the token every rank of a new communicator
// passes to InitRank. One process makes it with NewUniqueID and hands it to
// the others out of band (an environment variable, a file, a pipe, a
// key-value store); it holds the address where that process listens for the
// ranks to meet, so the process that made it must live until they have.
//
// Its text form (MarshalText, String, ParseUniqueID) is 256 hexadecimal
// digits; its binary form is the 128 bytes themselves.
type UniqueID [idBytes]byte

// NewUniqueID asks NCCL for a new unique id (ncclGetUniqueId). It needs
// the library, not a GPU.
func NewUniqueID() (UniqueID, error) {
	l, err := load()
	if err != nil {
		return UniqueID{}, err
	}
	return newUniqueID(l)
}

func newUniqueID(l *lib) (UniqueID, error) {
	var id UniqueID
	var r Result
	var before errMark
	_ = withDevice(nil, func() error {
		before = l.mark()
		r = Result(dynlib.Call(l.getUniqueID, uintptr(unsafe.Pointer(&id))))
		return nil
	})
	return id, l.error("ncclGetUniqueId", r, "", before)
}

// ParseUniqueID parses the text form of a UniqueID.
func ParseUniqueID(s string) (UniqueID, error) {
	var id UniqueID
	err := id.UnmarshalText([]byte(s))
	return id, err
}

// String returns the text form: 256 hexadecimal digits.
func (id UniqueID) String() string { return hex.EncodeToString(id[:]) }

// MarshalText returns the text form: 256 hexadecimal digits.
func (id UniqueID) MarshalText() ([]byte, error) {
	out := make([]byte, hex.EncodedLen(idBytes))
	hex.Encode(out, id[:])
	return out, nil
}

// UnmarshalText parses the text form.
func (id *UniqueID) UnmarshalText(text []byte) error {
	if len(text) != hex.EncodedLen(idBytes) {
		return fmt.Errorf("nccl: a unique id is %d hexadecimal digits, got %d characters", hex.EncodedLen(idBytes), len(text))
	}
	var tmp UniqueID
	if _, err := hex.Decode(tmp[:], text); err != nil {
		return fmt.Errorf("nccl: unique id: %w", err)
	}
	*id = tmp
	return nil
}

// MarshalBinary returns the 128 bytes.
func (id UniqueID) MarshalBinary() ([]byte, error) { return append([]byte(nil), id[:]...), nil }

// UnmarshalBinary takes exactly 128 bytes.
func (id *UniqueID) UnmarshalBinary(data []byte) error {
	if len(data) != idBytes {
		return fmt.Errorf("nccl: a unique id is %d bytes, got %d", idBytes, len(data))
	}
	copy(id[:], data)
	return nil
}
