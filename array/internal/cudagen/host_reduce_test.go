package cudagen

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// TestFullReductionsRunOnHost runs the single-launch full reduction of
// contiguous inputs on the host over sizes that exercise every part of
// its first pass: several full tiles per block (a grid of 3 blocks over 7
// tiles), the vectors past the last full tile, and the elements past the
// last vector; with 16-, 8- and 4-byte vectors and without (a misaligned
// start), several contiguous inputs, a broadcast one, an index program
// (positions computed from the tile) and maxima placed in each region, tied
// and NaN, for ArgMax and ArgMin. Results are compared with the CPU
// backend: exactly except float sums and means.
func TestFullReductionsRunOnHost(t *testing.T) {
	t.Parallel()
	clangtest.Need(t, "clang++-16")
	opts := Options{SMs: 1, MaxBlocks: 3, Aligned: hostOpts.Aligned}
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(21, 22))
	h := newHostRun(t)
	type check struct {
		name string
		dt   backend.DType
		out  *cpu.Buffer
		cpu  func()
	}
	var checks []check
	add := func(name string, op backend.ReduceOp, p *backend.Program, outDT backend.DType, wantVec int) {
		t.Helper()
		gpuOut := poisoned(be, outDT, 1)
		cpuOut := poisoned(be, outDT, 1)
		req := &backend.Reduction{Op: op, In: p, Axes: []int{0}, Out: backend.Operand{Buf: gpuOut, Layout: backend.Contiguous(nil)}}
		pl, err := PlanReduce(req, opts)
		if err != nil {
			t.Fatal(err)
		}
		k := pl.Launches[0].Kernel
		if got := vecOfReduce(k); got != wantVec {
			t.Fatalf("%s: kernel loads %d-element vectors, want %d", name, got, wantVec)
		}
		name = fmt.Sprintf("%s: %v of %v n=%d (grid %d)", name, op, p.Result(), p.Size(), pl.Launches[0].Grid[0])
		h.add(name, pl, gpuOut)
		cpuReq := *req
		cpuReq.Out.Buf = cpuOut
		checks = append(checks, check{name, outDT, cpuOut, func() {
			if err := be.Reduce(&cpuReq); err != nil {
				t.Fatal(err)
			}
		}})
	}
	// sized returns n for w-element vectors: 7 full tiles, 37 vectors
	// more and w-1 elements past the last vector.
	sized := func(w int) int { return w*(7*blockSize*Unroll+37) + w - 1 }
	// input makes a contiguous operand of n elements at offset off (the
	// buffer holds exactly off+n elements).
	input := func(dt backend.DType, n, off int) backend.Operand {
		buf := randBuffer(be, r, dt, off+n)
		if dt.IsFloat() { // no NaN or Inf from randBuffer unless a case asks
			setFloat(buf, 3, r.Float64())
			setFloat(buf, 5, r.Float64())
		}
		return backend.Operand{Buf: buf, Layout: backend.Layout{Shape: []int{n}, Strides: []int{1}, Offset: off}}
	}
	one := func(o backend.Operand) *backend.Program {
		return &backend.Program{Shape: o.Layout.Shape, Inputs: []backend.Operand{o}, Nodes: []backend.Node{{Op: backend.OpInput, DType: o.DType()}}}
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64, backend.Int32, backend.Int64, backend.Uint8, backend.Bool} {
		w := 4
		if dt.Size() > 4 {
			w = 2
		}
		ops := map[backend.DType][]backend.ReduceOp{
			backend.Float32: {backend.Sum, backend.Mean, backend.Max, backend.Min, backend.ArgMax, backend.ArgMin},
			backend.Float64: {backend.Sum, backend.Mean, backend.Max, backend.ArgMin},
			backend.Int32:   {backend.Sum, backend.Prod, backend.Max, backend.ArgMax},
			backend.Int64:   {backend.Sum, backend.Min, backend.ArgMin},
			backend.Uint8:   {backend.Max, backend.ArgMax},
			backend.Bool:    {backend.Any, backend.All},
		}[dt]
		for _, op := range ops {
			outDT := dt
			switch op {
			case backend.ArgMax, backend.ArgMin:
				outDT = backend.Int64
			case backend.Sum, backend.Prod:
				if !dt.IsFloat() {
					outDT = backend.Int64
				}
			}
			aligned := input(dt, sized(w), w)
			add("aligned", op, one(aligned), outDT, w)
			misaligned := input(dt, sized(1), 1)
			add("misaligned", op, one(misaligned), outDT, 1)
		}
		if dt == backend.Bool {
			// All over all-true data with one false in the tail.
			o := input(dt, sized(w), 0)
			s := o.Buf.(*cpu.Buffer).Slice().([]bool)
			for i := range s {
				s[i] = true
			}
			s[len(s)-2] = false
			add("one false in the tail", backend.All, one(o), backend.Bool, w)
		}
	}
	// Maxima placed in the full tiles, the vectors after them and the tail;
	// ties (the first position wins) and NaN (the first NaN wins).
	n := sized(4)
	tileEnd := 4 * 7 * blockSize * Unroll
	for _, c := range []struct {
		name string
		at   []int
		v    float64
	}{
		{"max in a full tile", []int{12345}, 100},
		{"max after the full tiles", []int{tileEnd + 17}, 100},
		{"max in the tail", []int{n - 2}, 100},
		{"tie: tile and tail", []int{n - 1, 777}, 100},
		{"tie: two tiles", []int{20000, 3}, 100},
		{"NaN among maxima", []int{n - 3, tileEnd + 5, 9000}, math.NaN()},
	} {
		for _, op := range []backend.ReduceOp{backend.ArgMax, backend.ArgMin, backend.Max} {
			o := input(backend.Float32, n, 0)
			v := c.v
			if op == backend.ArgMin && !math.IsNaN(v) {
				v = -v
			}
			for _, at := range c.at {
				setFloat(o.Buf.(*cpu.Buffer), at, v)
			}
			out := backend.Int64
			if op == backend.Max {
				out = backend.Float32
			}
			add(c.name, op, one(o), out, 4)
		}
	}
	// sum(x*y) with two contiguous inputs, and x*c with c broadcast.
	x, y := input(backend.Float32, n, 0), input(backend.Float32, n, 4)
	two := &backend.Program{Shape: []int{n}, Inputs: []backend.Operand{x, y}, Nodes: []backend.Node{
		{Op: backend.OpInput, DType: backend.Float32, Args: [3]int32{0}},
		{Op: backend.OpInput, DType: backend.Float32, Args: [3]int32{1}},
		{Op: backend.OpMul, DType: backend.Float32, Args: [3]int32{0, 1}}}}
	add("two inputs", backend.Sum, two, backend.Float32, 4)
	cb := randBuffer(be, r, backend.Float32, 1)
	bc := &backend.Program{Shape: []int{n}, Inputs: []backend.Operand{x, {Buf: cb, Layout: backend.Layout{Shape: []int{n}, Strides: []int{0}}}}, Nodes: two.Nodes}
	add("broadcast input", backend.Sum, bc, backend.Float32, 4)
	// An index program: positions come from the tile arithmetic.
	for _, op := range []backend.ReduceOp{backend.Sum, backend.ArgMax} {
		iota := &backend.Program{Shape: []int{n}, Nodes: []backend.Node{{Op: backend.OpIota, DType: backend.Int64}}}
		add("iota", op, iota, backend.Int64, 4)
	}
	got := h.run()
	for i, c := range checks {
		c.cpu()
		want := rawOf(c.out)
		ok := bytes.Equal(got[i], want) || closeRaw(c.dt, got[i], want)
		if !ok {
			t.Errorf("%s: host %s, CPU %s", c.name, decode(c.dt, got[i]), decode(c.dt, want))
		}
	}
	t.Logf("%d full reductions executed on the host", len(checks))
}

func setFloat(b *cpu.Buffer, i int, v float64) {
	switch s := b.Slice().(type) {
	case []float32:
		s[i] = float32(v)
	case []float64:
		s[i] = v
	}
}

// vecOfReduce is the vector width a full-reduction kernel loads with.
func vecOfReduce(k *Kernel) int {
	for _, w := range []int{4, 2} {
		if strings.Contains(k.Source, fmt.Sprintf(" nv = n / %d;", w)) {
			return w
		}
	}
	return 1
}
