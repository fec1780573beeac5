package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// TestSortValues32 checks that the radix sort of 32-bit values alone, in
// both directions, gives the values of the key-and-position sort.
func TestSortValues32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := [][2]int{{1, 100}, {1, 300}, {7, 255}, {1, 70001}, {3, 70000}, {1, 1 << 17}}
	for _, workers := range []int{1, 4} {
		be := New(0)
		be.SetWorkers(workers)
		for _, dt := range []backend.DType{backend.Float32, backend.Int32} {
			for _, sh := range shapes {
				for _, desc := range []bool{false, true} {
					what := fmt.Sprintf("workers %d %v %v desc %v", workers, dt, sh, desc)
					rows, L := sh[0], sh[1]
					n := rows * L
					in := alloc32(t, be, dt, n)
					switch s := asBuffer(in).Slice().(type) {
					case []float32:
						for i := range s {
							s[i] = float32(r.IntN(50)-25) / 4
							switch r.IntN(20) {
							case 0:
								s[i] = math.Float32frombits(0xffc00001 | r.Uint32()&0xffff)
							case 1:
								s[i] = float32(math.Copysign(0, -1))
							case 2:
								s[i] = float32(math.Inf(1 - 2*r.IntN(2)))
							}
						}
					case []int32:
						for i := range s {
							s[i] = r.Int32() - math.MaxInt32/2
						}
					}
					fast, slow := alloc32(t, be, dt, n), alloc32(t, be, dt, n)
					pos, err := be.Alloc(backend.Int64, n)
					if err != nil {
						t.Fatal(err)
					}
					op := func(b backend.Buffer) backend.Operand {
						return backend.Operand{Buf: b, Layout: backend.Contiguous([]int{n})}
					}
					req := backend.Sort{Keys: op(in), Rows: rows, Len: L, Descending: desc, OutKeys: op(fast)}
					if err := be.Sort(&req); err != nil {
						t.Fatal(err)
					}
					req.OutKeys, req.OutVals = op(slow), op(pos)
					if err := be.Sort(&req); err != nil {
						t.Fatal(err)
					}
					if !sameBits32(asBuffer(fast).Slice(), asBuffer(slow).Slice()) {
						t.Errorf("%s: the values differ from the key-and-position sort", what)
					}
				}
			}
		}
	}
}

func alloc32(t *testing.T, be *Backend, dt backend.DType, n int) backend.Buffer {
	b, err := be.Alloc(dt, n)
	if err != nil {
		t.Fatal(err)
	}
	switch s := asBuffer(b).Slice().(type) {
	case []float32:
		for i := range s {
			s[i] = 12345 // poison
		}
	case []int32:
		for i := range s {
			s[i] = 12345
		}
	}
	return b
}

func sameBits32(a, b any) bool {
	switch x := a.(type) {
	case []float32:
		y := b.([]float32)
		return slices.EqualFunc(x, y, func(p, q float32) bool { return math.Float32bits(p) == math.Float32bits(q) })
	case []int32:
		return slices.Equal(x, b.([]int32))
	}
	return false
}
