package array

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// ixCase is one NumPy conformance case (testdata/conformance/indexing.json,
// written by gen_indexing.py).
type ixCase struct {
	Name   string         `json:"name"`
	Op     string         `json:"op"`
	Params map[string]any `json:"params"`
	Inputs []ixArray      `json:"inputs"`
	Want   []ixArray      `json:"want"`
}

type ixArray struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Data  []any  `json:"data"`
}

func ixDType(t testing.TB, s string) DType {
	for _, d := range []DType{Bool, Uint8, Int32, Int64, Float32, Float64} {
		if d.String() == s {
			return d
		}
	}
	t.Fatalf("unknown dtype %q", s)
	return Bool
}

func ixValues(t testing.TB, data []any) []float64 {
	v := make([]float64, len(data))
	for i, x := range data {
		switch x := x.(type) {
		case float64:
			v[i] = x
		case bool:
			if x {
				v[i] = 1
			}
		case string:
			switch x {
			case "nan":
				v[i] = math.NaN()
			case "inf":
				v[i] = math.Inf(1)
			case "-inf":
				v[i] = math.Inf(-1)
			default:
				t.Fatalf("bad value %q", x)
			}
		default:
			t.Fatalf("bad value %v (%T)", x, x)
		}
	}
	return v
}

func (x ixArray) on(t testing.TB, d *Maker) *Array {
	a := fromTyped(d, typed(ixDType(t, x.DType), ixValues(t, x.Data)), x.Shape)
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	return a
}

func ixInt(p map[string]any, k string) int { return int(p[k].(float64)) }

func ixInts(p map[string]any, k string) []int {
	var out []int
	for _, v := range p[k].([]any) {
		out = append(out, int(v.(float64)))
	}
	return out
}

// ixRun runs a case's operation.
func ixRun(t *testing.T, d *Maker, c ixCase, in []*Array) []*Array {
	p := c.Params
	one := func(a *Array) []*Array { return []*Array{a} }
	switch c.Op {
	case "take":
		return one(in[0].Take(in[1], ixInt(p, "axis")))
	case "index_select":
		return one(in[0].IndexSelect(ixInt(p, "axis"), in[1]))
	case "take_along_axis":
		return one(in[0].TakeAlongAxis(in[1], ixInt(p, "axis")))
	case "fancy":
		var idx []Index
		for _, it := range p["index"].([]any) {
			m := it.(map[string]any)
			switch m["k"] {
			case "arr":
				idx = append(idx, Fancy(in[ixInt(m, "i")]))
			case "int":
				idx = append(idx, Idx(ixInt(m, "i")))
			case "newaxis":
				idx = append(idx, NewAxis)
			case "ellipsis":
				idx = append(idx, Ellipsis)
			case "slice":
				var s [3]int
				for j, v := range m["a"].([]any) {
					s[j] = None
					if v != nil {
						s[j] = int(v.(float64))
					}
				}
				if s[2] == None {
					s[2] = 1
				}
				idx = append(idx, S(s[0], s[1], s[2]))
			}
		}
		return one(in[0].Slice(idx...))
	case "mask":
		return one(in[0].Mask(in[1]))
	case "mask_static":
		return one(in[0].MaskStatic(in[1], ixInt(p, "size"), p["fill"]))
	case "set_mask":
		var v any
		if len(in) > 2 {
			v = in[2]
		} else {
			v = p["value"]
		}
		if err := in[0].SetMask(in[1], v); err != nil {
			t.Fatal(err)
		}
		return one(in[0])
	case "put":
		var v any
		if len(in) > 2 {
			v = in[2]
		} else {
			v = p["value"]
		}
		if err := in[0].Put(in[1], v); err != nil {
			t.Fatal(err)
		}
		return one(in[0])
	case "scatter_add":
		return one(in[0].ScatterAdd(ixInt(p, "axis"), in[1], in[2]))
	case "scatter_max":
		return one(in[0].ScatterMax(ixInt(p, "axis"), in[1], in[2]))
	case "scatter":
		return one(in[0].Scatter(ixInt(p, "axis"), in[1], in[2]))
	case "index_add":
		return one(in[0].IndexAdd(ixInt(p, "axis"), in[1], in[2]))
	case "nonzero":
		return in[0].Nonzero()
	case "nonzero_static":
		return in[0].NonzeroStatic(ixInt(p, "size"), int64(ixInt(p, "fill")))
	case "argwhere":
		return one(in[0].ArgWhere())
	case "flatnonzero":
		return one(in[0].FlatNonzero())
	case "split":
		return in[0].Split(ixInt(p, "n"), ixInt(p, "axis"))
	case "array_split":
		return in[0].ArraySplit(ixInt(p, "n"), ixInt(p, "axis"))
	case "split_at":
		return in[0].SplitAt(ixInts(p, "cuts"), ixInt(p, "axis"))
	case "chunk":
		return in[0].Chunk(ixInt(p, "n"), ixInt(p, "axis"))
	case "tile":
		return one(in[0].Tile(ixInts(p, "reps")...))
	case "repeat":
		var r any
		if _, ok := p["repeats"].([]any); ok {
			r = ixInts(p, "repeats")
		} else {
			r = ixInt(p, "repeats")
		}
		return one(in[0].Repeat(r, ixInt(p, "axis")))
	case "pad":
		var w [][2]int
		for _, x := range p["widths"].([]any) {
			v := x.([]any)
			w = append(w, [2]int{int(v[0].(float64)), int(v[1].(float64))})
		}
		mode := map[string]PadMode{"constant": PadConstant, "edge": PadEdge, "reflect": PadReflect}[p["mode"].(string)]
		return one(in[0].Pad(w, mode, p["value"]))
	case "flip":
		return one(in[0].Flip(ixInts(p, "axes")...))
	case "roll":
		if p["axis"] == nil {
			return one(in[0].RollFlat(ixInt(p, "shift")))
		}
		return one(in[0].Roll(ixInt(p, "shift"), ixInt(p, "axis")))
	case "tril":
		return one(in[0].Tril(ixInt(p, "k")))
	case "triu":
		return one(in[0].Triu(ixInt(p, "k")))
	case "diag":
		return one(in[0].Diag(ixInt(p, "k")))
	case "diagonal":
		return one(in[0].Diagonal(ixInt(p, "offset"), ixInt(p, "axis1"), ixInt(p, "axis2")))
	case "trace":
		return one(in[0].Trace(ixInt(p, "offset")))
	case "meshgrid":
		return Meshgrid(p["ij"].(bool), in...)
	case "zeros_like":
		return one(ZerosLike(in[0]))
	case "ones_like":
		return one(OnesLike(in[0]))
	case "full_like":
		return one(FullLike(in[0], p["value"]))
	case "logspace":
		return one(d.Logspace(ixDType(t, p["dtype"].(string)), p["start"].(float64), p["stop"].(float64), ixInt(p, "num"), p["base"].(float64)))
	}
	t.Fatalf("unknown op %q", c.Op)
	return nil
}

// ixTol is the tolerance of a case's float results: gathers are exact;
// scatter-adds sum in another order; logspace goes through pow.
func ixTol(op string, dt DType) float64 {
	switch op {
	case "scatter_add", "index_add", "trace":
		return reduceTol.of(dt)
	case "logspace":
		return transTol.of(dt)
	}
	return 0
}

func TestConformanceIndexing(t *testing.T) {
	b, err := os.ReadFile("testdata/conformance/indexing.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []ixCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 200 {
		t.Fatalf("only %d cases", len(file.Cases))
	}
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, c := range file.Cases {
			t.Run(c.Name, func(t *testing.T) {
				in := make([]*Array, len(c.Inputs))
				for i, x := range c.Inputs {
					in[i] = x.on(t, d)
				}
				got := ixRun(t, d, c, in)
				if len(got) != len(c.Want) {
					for _, g := range got {
						if err := g.Err(); err != nil {
							t.Fatal(err)
						}
					}
					t.Fatalf("%d results, want %d", len(got), len(c.Want))
				}
				for i, w := range c.Want {
					if err := got[i].Err(); err != nil {
						t.Fatal(err)
					}
					wdt := ixDType(t, w.DType)
					if got[i].DType() != wdt {
						t.Errorf("result %d: dtype %v, want %v", i, got[i].DType(), wdt)
					}
					h := readCase(t, c.Name, got[i])
					checkHost(t, fmt.Sprintf("result %d", i), h, w.Shape, ixValues(t, w.Data), ixTol(c.Op, wdt))
				}
			})
		}
	})
}
