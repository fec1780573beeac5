package difftest

import (
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"testing"
)

func TestGenerateDeterministic(t *testing.T) {
	a := Generate(rand.New(rand.NewPCG(1, 2)), Config{Exprs: 50})
	b := Generate(rand.New(rand.NewPCG(1, 2)), Config{Exprs: 50})
	if a.Source != b.Source {
		t.Fatal("same seed, different cases")
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "diff.go", a.Source, 0); err != nil {
		t.Fatalf("generated source does not parse: %v", err)
	}
	if len(a.Exprs) != 50 || len(a.Want) != 50 || len(a.Tol) != 50 || len(a.AbsTol) != 50 {
		t.Fatal("case has the wrong number of expressions")
	}
	if got := a.Check(a.Want); len(got) != 0 {
		t.Fatalf("a case does not match its own results: %v", got)
	}
}

// TestConvertMatchesGo checks the interpreter's generic conversions
// against Go's conversions written out for concrete types, on the values
// where they are implementation-specific (out of range, NaN).
func TestConvertMatchesGo(t *testing.T) {
	vals := []float64{0, -1, 1.5, -1.5, 300.7, -300.7, 70000.5, 2147483647.5, 2147483648, -2147483649, 4294967296,
		1e19, -1e19, 9.3e18, 1.8446744073709552e19, math.Inf(1), math.Inf(-1), math.NaN(), 1e300}
	for _, f := range vals {
		v := Value{F64, math.Float64bits(f)}
		check := func(k Kind, want uint64) {
			t.Helper()
			if got := convert(v, k).Bits; got != want {
				t.Errorf("%s(%v) = %#x, Go gives %#x", k, f, got, want)
			}
		}
		check(I8, uint64(int64(int8(f))))
		check(I16, uint64(int64(int16(f))))
		check(I32, uint64(int64(int32(f))))
		check(I64, uint64(int64(f)))
		check(U8, uint64(uint8(f)))
		check(U16, uint64(uint16(f)))
		check(U32, uint64(uint32(f)))
		check(U64, uint64(f))
		f32 := float32(f)
		v32 := Value{F32, uint64(math.Float32bits(f32))}
		if got, want := convert(v32, I32).Bits, uint64(int64(int32(f32))); got != want {
			t.Errorf("int32(float32(%v)) = %#x, Go gives %#x", f, got, want)
		}
		if got, want := convert(v32, U64).Bits, uint64(f32); got != want {
			t.Errorf("uint64(float32(%v)) = %#x, Go gives %#x", f, got, want)
		}
	}
}

func TestCheckTolerance(t *testing.T) {
	c := &Case{Exprs: []string{"a", "b", "c"}, Kinds: []Kind{F32, F32, I32}, Tol: []int{0, 2, 0}, AbsTol: []float64{0, 0, 0},
		Want: []uint64{uint64(math.Float32bits(1)), uint64(math.Float32bits(1)), 7}}
	next := uint64(math.Float32bits(math.Nextafter32(1, 2)))
	if bad := c.Check([]uint64{next, next, 7}); len(bad) != 1 {
		t.Errorf("one ulp off: %d mismatches, want 1 (exact expression only)", len(bad))
	}
	nan := uint64(math.Float32bits(float32(math.NaN())))
	c.Want[0] = nan
	if bad := c.Check([]uint64{nan | 1, c.Want[1], 7}); len(bad) != 0 {
		t.Errorf("NaNs of different payloads must compare equal: %v", bad)
	}
}
