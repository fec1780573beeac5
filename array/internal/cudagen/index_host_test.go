package cudagen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// ixHostAtomics are the atomics and the warp vote of the indexing kernels
// on the host harness (blocks run one after another, so an atomic is a
// plain read-modify-write; the vote meets at the warp's barrier).
const ixHostAtomics = `
static unsigned long long atomicCAS(unsigned long long *p, unsigned long long c, unsigned long long v) { unsigned long long o = *p; if (o == c) *p = v; return o; }
static unsigned int atomicCAS(unsigned int *p, unsigned int c, unsigned int v) { unsigned int o = *p; if (o == c) *p = v; return o; }
static float atomicAdd(float *p, float v) { float o = *p; *p = o + v; return o; }
static double atomicAdd(double *p, double v) { double o = *p; *p = o + v; return o; }
static unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; *p = o + v; return o; }
static int atomicMax(int *p, int v) { int o = *p; if (v > o) *p = v; return o; }
static long long atomicMax(long long *p, long long v) { long long o = *p; if (v > o) *p = v; return o; }
// The harness passes typed buffers; the kernels take words of the
// element's size: a wrapper converts every pointer.
struct gocu_anyptr { void *p; template <typename T> operator T *() const { return (T *)p; } };
template <typename T> static gocu_anyptr gocu_cast(T *p) { return {(void *)p}; }
template <typename T> static T gocu_cast(T v) { return v; }
static int __popc(unsigned int x) { return __builtin_popcount(x); }
static unsigned int __ballot_sync(unsigned int, bool f) {
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	gocu_slot[w][lane] = f;
	gocu_arrive(gocu_wbar[w]);
	unsigned int r = 0;
	for (int l = 0; l < 32; l++) if (gocu_slot[w][l]) r |= 1u << l;
	gocu_arrive(gocu_wbar[w]);
	return r;
}
`

// ixHostRun is a hostRun that also knows the indexing kernels' helpers.
func ixHostRun(t *testing.T) *hostRun {
	h := newHostRun(t)
	h.src.WriteString(ixHostAtomics + ixHelpers)
	return h
}

// ixAdd queues a plan of indexing kernels, their shared prefix removed.
func ixAdd(h *hostRun, what string, pl *Plan, out *cpu.Buffer) {
	cp := *pl
	cp.Launches = append([]Launch(nil), pl.Launches...)
	for i := range cp.Launches {
		k := *cp.Launches[i].Kernel
		src := strings.Replace(k.Source, vectorTypes+ixHelpers, "", 1)
		src = strings.Replace(src, " "+k.Name+"(", " "+k.Name+"_impl(", 1)
		k.Source = src + fmt.Sprintf("template <typename... A> static void %s(A... a) { %s_impl(gocu_cast(a)...); }\n", k.Name, k.Name)
		cp.Launches[i].Kernel = &k
	}
	h.add(what, &cp, out)
}

func ixBuf(be *cpu.Backend, dt backend.DType, n int) *cpu.Buffer {
	b, err := be.Alloc(dt, n)
	if err != nil {
		panic(err)
	}
	return b.(*cpu.Buffer)
}

// ixIdx draws n indices in [-len, len) (or [0, len)) as dtype dt.
func ixIdx(be *cpu.Backend, r *rand.Rand, dt backend.DType, n, l int, neg bool) *cpu.Buffer {
	b := ixBuf(be, dt, n)
	for i := 0; i < n; i++ {
		v := r.IntN(l)
		if neg && r.IntN(2) == 0 {
			v -= l
		}
		switch s := b.Slice().(type) {
		case []int64:
			s[i] = int64(v)
		case []int32:
			s[i] = int32(v)
		}
	}
	return b
}

// ixSmallInts fills a float or integer buffer with small integers (sums
// of them are exact in any order).
func ixSmallInts(b *cpu.Buffer, r *rand.Rand) {
	switch s := b.Slice().(type) {
	case []float32:
		for i := range s {
			s[i] = float32(r.IntN(17) - 8)
		}
	case []float64:
		for i := range s {
			s[i] = float64(r.IntN(17) - 8)
		}
	case []int32:
		for i := range s {
			s[i] = int32(r.IntN(17) - 8)
		}
	case []int64:
		for i := range s {
			s[i] = int64(r.IntN(17) - 8)
		}
	case []uint8:
		for i := range s {
			s[i] = uint8(r.IntN(256))
		}
	}
}

func ixClone(be *cpu.Backend, b *cpu.Buffer) *cpu.Buffer {
	c := ixBuf(be, b.DType(), b.Len())
	if err := binary.Read(bytes.NewReader(rawOf(b)), binary.LittleEndian, c.Slice()); err != nil {
		panic(err)
	}
	return c
}

// TestIndexPlansRunOnHost runs gather, scatter and nonzero plans on the
// host harness (threads for the barriers and warp votes, the sanitizer
// for bounds) and compares them with the CPU backend on the same inputs.
func TestIndexPlansRunOnHost(t *testing.T) {
	clangPath(t)
	be := cpu.New(0)
	r := rand.New(rand.NewPCG(19, 1))
	h := ixHostRun(t)
	var want [][]byte
	var names []string
	errw := func() *cpu.Buffer { return ixBuf(be, backend.Int64, 4) }
	zeroErr := make([]byte, 32)

	// Gathers: flat and row kernels, word widths, two index arrays.
	type gcase struct {
		dt      backend.DType
		O, M, I int
		lens    []int
		idxDT   backend.DType
		inner   bool // the index varies along I (TakeAlongAxis)
		srcOff  int
	}
	for _, c := range []gcase{
		{backend.Float32, 1, 700, 1, []int{300}, backend.Int64, false, 0},
		{backend.Float32, 1, 40, 96, []int{50}, backend.Int64, false, 0},
		{backend.Float32, 3, 20, 24, []int{7}, backend.Int32, false, 0},
		{backend.Float32, 2, 30, 9, []int{5}, backend.Int64, false, 1},
		{backend.Float64, 1, 33, 20, []int{6, 4}, backend.Int64, false, 0},
		{backend.Uint8, 4, 9, 40, []int{11}, backend.Int32, false, 0},
		{backend.Int64, 3, 5, 7, []int{6}, backend.Int64, true, 0},
		{backend.Bool, 5, 1, 1, []int{3}, backend.Int64, false, 0},
	} {
		N := 1
		for _, l := range c.lens {
			N *= l
		}
		src := randBuffer(be, r, c.dt, c.srcOff+c.O*N*c.I)
		g := &backend.Gather{Src: src, SrcOffset: c.srcOff, O: c.O, M: c.M, I: c.I}
		for j, l := range c.lens {
			st := [3]int{0, 1, 0}
			n := c.M
			if c.inner {
				st, n = [3]int{c.M * c.I, c.I, 1}, c.O*c.M*c.I
			}
			g.Idx = append(g.Idx, backend.Index{Buf: ixIdx(be, r, c.idxDT, n, l, true), Strides: st, Len: l, Axis: j})
		}
		ref := ixBuf(be, c.dt, c.O*c.M*c.I)
		g.Out = ref
		if err := be.Gather(g); err != nil {
			t.Fatal(err)
		}
		out := ixBuf(be, c.dt, c.O*c.M*c.I)
		out.Poison()
		g.Out = out
		ew := errw()
		pl, err := PlanGather(g, ew, hostOpts)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("gather %+v", c)
		ixAdd(h, name, pl, out)
		h.add(name+" error words", &Plan{}, ew)
		want = append(want, rawOf(ref), zeroErr)
		names = append(names, name, name+" error words")
	}

	// An index out of range: the error words name it.
	{
		src := randBuffer(be, r, backend.Float32, 10)
		idx := ixBuf(be, backend.Int64, 3)
		copy(idx.Slice().([]int64), []int64{1, -11, 2})
		out := ixBuf(be, backend.Float32, 3)
		ew := errw()
		pl, err := PlanGather(&backend.Gather{Src: src, Out: out, O: 1, M: 3, I: 1,
			Idx: []backend.Index{{Buf: idx, Strides: [3]int{0, 1, 0}, Len: 10, Axis: 2}}}, ew, hostOpts)
		if err != nil {
			t.Fatal(err)
		}
		h.add("bad index", &Plan{}, out) // unused; keeps the buffers ordered
		ixAdd(h, "bad index", pl, ew)
		var w bytes.Buffer
		for _, v := range []int64{1, -11, 2, 10} {
			binary.Write(&w, binary.LittleEndian, v)
		}
		want = append(want, nil, w.Bytes())
		names = append(names, "", "bad index error words")
	}

	// Scatters: add and max with duplicates (small integers, so any order
	// sums exactly), set with distinct indices.
	type scase struct {
		op      backend.ScatterOp
		dt      backend.DType
		O, M, I int
		n       int
		inner   bool
	}
	for _, c := range []scase{
		{backend.ScatterAdd, backend.Float32, 1, 300, 64, 40, false},
		{backend.ScatterAdd, backend.Float64, 2, 500, 1, 7, false},
		{backend.ScatterAdd, backend.Int64, 3, 4, 5, 6, true},
		{backend.ScatterAdd, backend.Int32, 1, 50, 30, 9, false},
		{backend.ScatterMax, backend.Float32, 2, 60, 3, 5, true},
		{backend.ScatterMax, backend.Int32, 1, 40, 70, 8, false},
		{backend.ScatterMax, backend.Float64, 1, 30, 1, 4, false},
		{backend.ScatterSet, backend.Uint8, 2, 3, 40, 3, false},
	} {
		dst := ixBuf(be, c.dt, c.O*c.n*c.I)
		ixSmallInts(dst, r)
		val := ixBuf(be, c.dt, c.O*c.M*c.I)
		ixSmallInts(val, r)
		if c.op == backend.ScatterMax {
			// NaN wins, in the destination or the values.
			switch s := val.Slice().(type) {
			case []float32:
				s[3], s[len(s)-1] = float32(math.NaN()), float32(math.NaN())
				dst.Slice().([]float32)[1] = float32(math.NaN())
			case []float64:
				s[0] = math.NaN()
				dst.Slice().([]float64)[2] = math.NaN()
			}
		}
		s := &backend.Scatter{Op: c.op, Val: val, ValStrides: [3]int{c.M * c.I, c.I, 1}, O: c.O, M: c.M, I: c.I}
		var idx *cpu.Buffer
		st := [3]int{0, 1, 0}
		switch {
		case c.op == backend.ScatterSet:
			idx = ixBuf(be, backend.Int64, c.M)
			for i, p := range r.Perm(c.n)[:c.M] {
				idx.Slice().([]int64)[i] = int64(p)
			}
		case c.inner:
			idx = ixIdx(be, r, backend.Int64, c.O*c.M*c.I, c.n, false)
			st = [3]int{c.M * c.I, c.I, 1}
		default:
			idx = ixIdx(be, r, backend.Int64, c.M, c.n, true)
		}
		s.Idx = []backend.Index{{Buf: idx, Strides: st, Len: c.n}}
		ref := ixClone(be, dst)
		s.Dst = ref
		if err := be.Scatter(s); err != nil {
			t.Fatal(err)
		}
		s.Dst = dst
		ew := errw()
		pl, err := PlanScatter(s, ew, hostOpts)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("scatter %+v", c)
		ixAdd(h, name, pl, dst)
		h.add(name+" error words", &Plan{}, ew)
		want = append(want, rawOf(ref), zeroErr)
		names = append(names, name, name+" error words")
	}

	// Nonzero over several tiles, with a cap below the count, and a count
	// alone.
	for _, c := range []struct{ n, cap int }{{20000, 20000}, {9000, 100}, {300, 0}, {4096, 4096}} {
		mask := ixBuf(be, backend.Bool, c.n+3)
		for i := range mask.Slice().([]bool) {
			mask.Slice().([]bool)[i] = r.IntN(3) == 0
		}
		z := &backend.Nonzero{Mask: mask, MaskOffset: 3, N: c.n, Cap: c.cap}
		refOut, refCnt := ixBuf(be, backend.Int64, max(c.cap, 1)), ixBuf(be, backend.Int64, 1)
		z.Out, z.Count = refOut, refCnt
		if err := be.Nonzero(z); err != nil {
			t.Fatal(err)
		}
		out, cnt := ixClone(be, refOut), ixBuf(be, backend.Int64, 1)
		z.Out, z.Count = out, cnt
		pl, err := PlanNonzero(z, hostOpts)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("nonzero %+v", c)
		ixAdd(h, name, pl, out)
		h.add(name+" count", &Plan{}, cnt)
		want = append(want, rawOf(refOut), rawOf(refCnt))
		names = append(names, name, name+" count")
	}

	got := h.run()
	for i, w := range want {
		if w != nil && !bytes.Equal(got[i], w) {
			t.Errorf("%s: host kernels differ from the CPU backend: got % x..., want % x...", names[i], got[i][:min(16, len(got[i]))], w[:min(16, len(w))])
		}
	}
}
