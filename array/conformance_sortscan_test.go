package array

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The sort, scan and statistics conformance table: cases computed by NumPy
// (testdata/conformance/gen_sortscan.py writes sortscan.json), run on every
// backend and compared exactly for integers and indices, within a
// tolerance for floats.

type ssCase struct {
	Name   string         `json:"name"`
	Op     string         `json:"op"`
	Params map[string]any `json:"params"`
	Inputs []ssArr        `json:"inputs"`
	Want   []ssArr        `json:"want"`
}

type ssArr struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Data  []any  `json:"data"`
}

func ssLoad(t *testing.T) []ssCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "conformance", "sortscan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []ssCase `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // int64 data past 2^53 stays exact
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 100 {
		t.Fatalf("only %d conformance cases", len(f.Cases))
	}
	return f.Cases
}

func ssValues(a ssArr) []float64 {
	v := make([]float64, len(a.Data))
	for i, x := range a.Data {
		switch x := x.(type) {
		case json.Number:
			v[i], _ = x.Float64()
		case string:
			v[i] = map[string]float64{"nan": math.NaN(), "inf": math.Inf(1), "-inf": math.Inf(-1)}[x]
		}
	}
	return v
}

// ssInt64s decodes integer data exactly.
func ssInt64s(t *testing.T, a ssArr) []int64 {
	out := make([]int64, len(a.Data))
	for i, n := range a.Data {
		x, err := n.(json.Number).Int64()
		if err != nil {
			t.Fatalf("integer %v: %v", n, err)
		}
		out[i] = x
	}
	return out
}

var ssDTypeNames = map[string]DType{"bool": Bool, "uint8": Uint8, "int32": Int32, "int64": Int64, "float32": Float32, "float64": Float64,
	"int16": Int16, "uint16": Uint16, "uint32": Uint32, "uint64": Uint64}

// ssBits decodes integer data exactly, as the bits of uint64 values.
func ssBits(t *testing.T, a ssArr) []uint64 {
	out := make([]uint64, len(a.Data))
	for i, n := range a.Data {
		s := n.(json.Number).String()
		x, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			y, err2 := strconv.ParseInt(s, 10, 64)
			if err2 != nil {
				t.Fatalf("integer %v: %v", n, err)
			}
			x = uint64(y)
		}
		out[i] = x
	}
	return out
}

func ssArray(t *testing.T, d *Maker, a ssArr) *Array {
	dt := ssDTypeNames[a.DType]
	if dt.IsInt() && dt != Uint8 && dt != Int32 {
		// Exactly, through the bits: int64 and uint64 values need all 64.
		x := fromSliceOn(d, ssBits(t, a), len(a.Data))
		defer x.Close()
		if len(a.Shape) == 0 {
			return x.AsType(dt).Reshape()
		}
		return x.AsType(dt).Reshape(a.Shape...)
	}
	return fromTyped(d, typed(dt, ssValues(a)), a.Shape)
}

func ssParamInts(p map[string]any, key string) []int {
	var out []int
	if xs, ok := p[key].([]any); ok {
		for _, x := range xs {
			n, _ := x.(json.Number).Int64()
			out = append(out, int(n))
		}
	}
	return out
}

// ssRun evaluates one case's operation.
func ssRun(t *testing.T, d *Maker, c ssCase) []*Array {
	in := make([]*Array, len(c.Inputs))
	for i, a := range c.Inputs {
		in[i] = ssArray(t, d, a)
	}
	x, p := in[0], c.Params
	num := func(k string) float64 {
		n, _ := p[k].(json.Number)
		f, _ := n.Float64()
		return f
	}
	axis, axes := int(num("axis")), ssParamInts(p, "axes")
	ddof := int(num("ddof"))
	switch c.Op {
	case "sort":
		return []*Array{x.Sort(axis)}
	case "argsort":
		return []*Array{x.Argsort(axis)}
	case "partition":
		kth := int(num("kth"))
		return []*Array{x.Partition(kth, axis).Slice(ssAt((axis+x.Ndim())%x.Ndim(), Idx(kth))...)}
	case "cumsum":
		return []*Array{x.Cumsum(axis)}
	case "cumprod":
		return []*Array{x.Cumprod(axis)}
	case "cummax":
		return []*Array{x.Cummax(axis)}
	case "cummin":
		return []*Array{x.Cummin(axis)}
	case "diff":
		return []*Array{x.Diff(int(num("n")), axis)}
	case "unique":
		v, i, inv, cnt := x.UniqueAll()
		return []*Array{v, i, inv.Reshape(-1), cnt}
	case "searchsorted":
		return []*Array{SearchSorted(x, in[1], p["right"] == true)}
	case "bincount":
		var w *Array
		if p["weights"] == true {
			w = in[1]
		}
		return []*Array{x.Bincount(w, int(num("minlength")))}
	case "histogram":
		var h, e *Array
		if _, ok := p["lo"]; ok {
			h, e = x.Histogram(int(num("bins")), num("lo"), num("hi"))
		} else {
			h, e = x.Histogram(int(num("bins")))
		}
		return []*Array{h, e}
	case "var":
		return []*Array{x.Var(ddof, axes...)}
	case "std":
		return []*Array{x.Std(ddof, axes...)}
	case "median":
		return []*Array{x.Median(axes...)}
	case "quantile":
		return []*Array{x.Quantile(num("q"), axes...)}
	case "percentile":
		return []*Array{x.Percentile(num("p"), axes...)}
	case "count_nonzero":
		return []*Array{x.CountNonzero(axes...)}
	case "argmax":
		return []*Array{x.ArgMax(axes...)}
	case "argmin":
		return []*Array{x.ArgMin(axes...)}
	case "nanquantile":
		return []*Array{x.NanQuantile(num("q"), axes...)}
	case "nanmedian":
		return []*Array{x.NanMedian(axes...)}
	case "nanpercentile":
		return []*Array{x.NanPercentile(num("p"), axes...)}
	case "nansum":
		return []*Array{x.NanSum(axes...)}
	case "nanmean":
		return []*Array{x.NanMean(axes...)}
	case "nanmax":
		return []*Array{x.NanMax(axes...)}
	case "nanmin":
		return []*Array{x.NanMin(axes...)}
	case "nanprod":
		return []*Array{x.NanProd(axes...)}
	case "nanvar":
		return []*Array{x.NanVar(ddof, axes...)}
	case "nanstd":
		return []*Array{x.NanStd(ddof, axes...)}
	case "nanargmax":
		return []*Array{x.NanArgMax(axes...)}
	case "nanargmin":
		return []*Array{x.NanArgMin(axes...)}
	case "isclose":
		return []*Array{IsClose(x, in[1], num("rtol"), num("atol"), p["equal_nan"] == true)}
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

// ssTol is the relative tolerance of a float result.
func ssTol(op string, dt DType) float64 {
	if dt == Float32 {
		return 2e-5
	}
	return 1e-11
}

func TestConformanceSortScan(t *testing.T) {
	cases := ssLoad(t)
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, c := range cases {
			got := ssRun(t, d, c)
			if len(got) != len(c.Want) {
				t.Fatalf("%s: %d results, want %d", c.Name, len(got), len(c.Want))
			}
			for k, w := range c.Want {
				what := fmt.Sprintf("%s result %d", c.Name, k)
				g := got[k]
				if err := g.Err(); err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
				wdt := ssDTypeNames[w.DType]
				if g.DType() != wdt {
					t.Errorf("%s: dtype %v, want %v", what, g.DType(), wdt)
					continue
				}
				if !sameShape(g.Shape(), w.Shape) {
					t.Errorf("%s: shape %v, want %v", what, g.Shape(), w.Shape)
					continue
				}
				if wdt.IsInt() {
					gv, err := ToSlice[uint64](g) // exact: the bits, wrapped
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					wv := ssBits(t, w)
					if wdt.IsSigned() {
						for i, v := range ssInt64s(t, w) {
							wv[i] = uint64(v)
						}
						ga, _ := ToSlice[int64](g)
						for i, v := range ga {
							gv[i] = uint64(v)
						}
					}
					for i := range wv {
						if gv[i] != wv[i] {
							t.Errorf("%s: element %d = %d, want %d", what, i, gv[i], wv[i])
							break
						}
					}
					continue
				}
				rtol := 0.0
				if wdt.IsFloat() {
					rtol = ssTol(c.Op, wdt)
				}
				gh := readCase(t, what, g)
				wv := ssValues(w)
				for i := range wv {
					if !near(gh.v[i], wv[i], rtol) {
						t.Errorf("%s: element %d = %v, want %v", what, i, gh.v[i], wv[i])
						break
					}
				}
			}
			closeAll(got...)
		}
	})
}
