package nccl

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestDataTypes(t *testing.T) {
	for _, c := range []struct {
		t    DataType
		name string
		size int
	}{
		{Int8, "int8", 1}, {Uint8, "uint8", 1}, {Int32, "int32", 4}, {Uint32, "uint32", 4},
		{Int64, "int64", 8}, {Uint64, "uint64", 8}, {Float16, "float16", 2}, {Float32, "float32", 4},
		{Float64, "float64", 8}, {BFloat16, "bfloat16", 2}, {Float8E4M3, "float8_e4m3", 1}, {Float8E5M2, "float8_e5m2", 1},
	} {
		if c.t.String() != c.name || c.t.Size() != c.size {
			t.Errorf("%d: %q %d, want %q %d", int32(c.t), c.t.String(), c.t.Size(), c.name, c.size)
		}
	}
	if DataType(12).Size() != 0 || DataType(-1).String() != "DataType(-1)" {
		t.Error("unknown types")
	}
	// The values are nccl.h's.
	if Float16 != 6 || Float32 != 7 || BFloat16 != 9 || Float8E4M3 != 10 || Float8E5M2 != 11 {
		t.Error("data type values differ from nccl.h")
	}
	if Sum != 0 || Prod != 1 || Max != 2 || Min != 3 || Avg != 4 || Avg.String() != "avg" || RedOp(5).String() != "RedOp(5)" {
		t.Error("reduction ops")
	}
}

func TestFP8NeedsNCCL224(t *testing.T) {
	old := &lib{version: 22305, major: 2, minor: 23, patch: 5}
	err := Float8E4M3.check("ncclAllGather", old)
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "2.24") {
		t.Errorf("FP8 on 2.23: %v", err)
	}
	if err := BFloat16.check("ncclAllGather", old); err != nil {
		t.Errorf("bf16 on 2.23: %v", err)
	}
	if err := Float8E5M2.check("ncclAllGather", &lib{version: 22403}); err != nil {
		t.Errorf("FP8 on 2.24: %v", err)
	}
	if err := DataType(12).check("ncclAllGather", old); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("type 12: %v", err)
	}
}

type celsius float32

func TestTypeOf(t *testing.T) {
	for got, want := range map[DataType]DataType{
		TypeOf[int8](): Int8, TypeOf[uint8](): Uint8, TypeOf[int32](): Int32, TypeOf[uint32](): Uint32,
		TypeOf[int64](): Int64, TypeOf[uint64](): Uint64, TypeOf[float64](): Float64,
	} {
		if got != want {
			t.Errorf("TypeOf = %v, want %v", got, want)
		}
	}
	if TypeOf[float32]() != Float32 || TypeOf[celsius]() != Float32 {
		t.Error("TypeOf float32")
	}
}

func TestUniqueIDRoundTrip(t *testing.T) {
	var id UniqueID
	for i := range id {
		id[i] = byte(i*37 + 11)
	}
	text, err := id.MarshalText()
	if err != nil || len(text) != 256 || string(text) != id.String() {
		t.Fatalf("MarshalText: %q, %v", text, err)
	}
	back, err := ParseUniqueID(string(text))
	if err != nil || back != id {
		t.Fatalf("ParseUniqueID: %v", err)
	}
	bin, _ := id.MarshalBinary()
	var fromBin UniqueID
	if err := fromBin.UnmarshalBinary(bin); err != nil || fromBin != id || !bytes.Equal(bin, id[:]) {
		t.Fatalf("binary: %v", err)
	}
	// Through JSON, as a config file or a key-value store would carry it.
	js, err := json.Marshal(map[string]UniqueID{"id": id})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]UniqueID
	if err := json.Unmarshal(js, &m); err != nil || m["id"] != id {
		t.Fatalf("JSON: %s, %v", js, err)
	}
	// Through an environment variable, as the multi-process test does.
	t.Setenv("GOCU_NCCL_TEST_ID_ROUNDTRIP", id.String())
	if got, err := ParseUniqueID(os.Getenv("GOCU_NCCL_TEST_ID_ROUNDTRIP")); err != nil || got != id {
		t.Fatalf("env: %v", err)
	}
}

func TestUniqueIDRejectsBadInput(t *testing.T) {
	var id UniqueID
	for _, s := range []string{"", "abc", strings.Repeat("0", 255), strings.Repeat("0", 257), strings.Repeat("zz", 128)} {
		if err := id.UnmarshalText([]byte(s)); err == nil {
			t.Errorf("UnmarshalText accepted %d characters %.8q", len(s), s)
		}
	}
	if err := id.UnmarshalBinary(make([]byte, 127)); err == nil {
		t.Error("UnmarshalBinary accepted 127 bytes")
	}
	if id != (UniqueID{}) {
		t.Error("a failed unmarshal changed the id")
	}
}
