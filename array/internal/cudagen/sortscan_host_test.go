package cudagen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// ssHostPrelude runs the sort and scan kernels on the host: each CUDA
// thread of a block is a ucontext, barriers and warp collectives are
// counting barriers (as in threadedPrelude), and blocks run one after
// another. A look-back never meets an unfinished predecessor that way, so
// the status stores are delayed: SS_STORE_STATUS defers a store at random
// and SS_SPIN (a waiting look-back) makes a random deferred store visible.
// Every state a look-back can see on the GPU (nothing, the aggregate, the
// prefix) is then seen here too.
const ssHostPrelude = `#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include <ucontext.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define MAXT 1024
struct gocu_dim3 { unsigned int x, y, z; };
static gocu_dim3 threadIdx, blockIdx, blockDim, gridDim;
struct gocu_barrier { int n, count; unsigned long long gen; };
static ucontext_t gocu_sched, gocu_ctx[MAXT];
static char *gocu_stack[MAXT];
static bool gocu_done[MAXT];
static int gocu_cur;
static std::function<void()> gocu_fn;
static gocu_barrier gocu_bbar, gocu_wbar[MAXT / 32];
static unsigned long long gocu_slot[MAXT / 32][32];
static void gocu_yield() { swapcontext(&gocu_ctx[gocu_cur], &gocu_sched); threadIdx.x = gocu_cur; }
static void gocu_arrive(gocu_barrier &b) {
	unsigned long long g = b.gen;
	if (++b.count == b.n) { b.count = 0; b.gen++; return; }
	while (b.gen == g) gocu_yield();
}
static void __syncthreads() { gocu_arrive(gocu_bbar); }
static void __syncwarp(unsigned int = 0xffffffffu) { gocu_arrive(gocu_wbar[threadIdx.x >> 5]); }
static void __threadfence() {}
template <typename T> static T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }
static int atomicExch(int *p, int v) { int o = *p; *p = v; return o; }
static int __popc(unsigned int v) { return __builtin_popcount(v); }
static int __ffs(int v) { return __builtin_ffs(v); }
// gocu_xchg publishes v in the lane's slot and returns the warp's slots.
template <typename T> static void gocu_xchg(T v, unsigned long long *all) {
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	gocu_slot[w][lane] = 0;
	memcpy(&gocu_slot[w][lane], &v, sizeof(T));
	gocu_arrive(gocu_wbar[w]);
	memcpy(all, gocu_slot[w], sizeof(gocu_slot[w]));
	gocu_arrive(gocu_wbar[w]);
}
template <typename T> static T gocu_lane(const unsigned long long *all, int l) { T r; memcpy(&r, &all[l], sizeof(T)); return r; }
template <typename T> static T __shfl_up_sync(unsigned int, T v, int d, int = 32) {
	unsigned long long all[32]; gocu_xchg(v, all);
	const int lane = threadIdx.x & 31;
	return lane >= d ? gocu_lane<T>(all, lane - d) : v;
}
template <typename T> static T __shfl_down_sync(unsigned int, T v, int d, int = 32) {
	unsigned long long all[32]; gocu_xchg(v, all);
	const int lane = threadIdx.x & 31;
	return lane + d < 32 ? gocu_lane<T>(all, lane + d) : v;
}
template <typename T> static T __shfl_sync(unsigned int, T v, int l, int = 32) {
	unsigned long long all[32]; gocu_xchg(v, all);
	return gocu_lane<T>(all, l & 31);
}
static unsigned int __ballot_sync(unsigned int, bool p) {
	unsigned long long all[32]; gocu_xchg((int)p, all);
	unsigned int m = 0;
	for (int l = 0; l < 32; l++) if (all[l]) m |= 1u << l;
	return m;
}
static int __all_sync(unsigned int, int p) { return __ballot_sync(0xffffffffu, p != 0) == 0xffffffffu; }
static int __any_sync(unsigned int, int p) { return __ballot_sync(0xffffffffu, p != 0) != 0u; }
static unsigned int __match_any_sync(unsigned int, unsigned int v) {
	unsigned long long all[32]; gocu_xchg(v, all);
	unsigned int m = 0;
	for (int l = 0; l < 32; l++) if ((unsigned int)all[l] == v) m |= 1u << l;
	return m;
}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
struct alignas(16) int4 { int x, y, z, w; };
// Delayed status stores.
static unsigned long long gocu_rng = 88172645463325252ull;
static unsigned long long gocu_rand() { gocu_rng ^= gocu_rng << 13; gocu_rng ^= gocu_rng >> 7; gocu_rng ^= gocu_rng << 17; return gocu_rng; }
struct gocu_store { void *p; unsigned long long v; int w; };
static std::vector<gocu_store> gocu_pending; // in store order
static unsigned long long gocu_spins, gocu_deferred;
static void gocu_write(const gocu_store &s) {
	if (s.w == 8) *(unsigned long long *)s.p = s.v;
	else *(unsigned int *)s.p = (unsigned int)s.v;
}
// gocu_flush makes the oldest held store to p visible.
static bool gocu_flush(void *p) {
	for (size_t i = 0; i < gocu_pending.size(); i++) {
		if (gocu_pending[i].p == p) {
			gocu_write(gocu_pending[i]);
			gocu_pending.erase(gocu_pending.begin() + i);
			return true;
		}
	}
	return false;
}
static void gocu_flush_one() {
	if (!gocu_pending.empty()) gocu_flush(gocu_pending[gocu_rand() % gocu_pending.size()].p);
}
// A first store (the aggregate) mostly goes through; a later one (the
// prefix) is mostly held back; stores to one word stay in order. A
// look-back waiting on a word sees its next store: walks go far over
// aggregates, as when many tiles are in flight.
static void gocu_store_w(void *p, unsigned long long v, int w) {
	bool held = false;
	for (auto &s : gocu_pending) held = held || s.p == p;
	const unsigned long long cur = w == 8 ? *(unsigned long long *)p : *(unsigned int *)p;
	if (held || (cur == 0 ? gocu_rand() % 8 == 0 : gocu_rand() % 8 != 0)) {
		gocu_pending.push_back({p, v, w});
		gocu_deferred++;
		return;
	}
	gocu_write({p, v, w});
}
static void gocu_spin(void *p) {
	gocu_spins++;
	if (!p || !gocu_flush(p)) gocu_flush_one();
}
static void gocu_status(void *p, unsigned long long v) { gocu_store_w(p, v, 8); }
static void gocu_status32(void *p, unsigned int v) { gocu_store_w(p, v, 4); }
#define SS_STORE_STATUS(p, v) gocu_status((p), (v))
#define SS_STORE_STATUS32(p, v) gocu_status32((p), (v))
#define SS_SPIN(p) gocu_spin(p)
static void gocu_entry() { gocu_fn(); gocu_done[gocu_cur] = true; swapcontext(&gocu_ctx[gocu_cur], &gocu_sched); }
static void gocu_init() {
	for (int t = 0; t < MAXT; t++) gocu_stack[t] = (char *)malloc(1 << 16);
}
template <typename F> static void gocu_launch(unsigned int grid, unsigned int block, F f) {
	if (block > MAXT || block % 32) abort();
	gridDim.x = grid;
	blockDim.x = block;
	gocu_fn = f;
	for (unsigned int b = 0; b < grid; b++) {
		blockIdx.x = b;
		gocu_bbar = {(int)block, 0, 0};
		for (unsigned int w = 0; w < block / 32; w++) gocu_wbar[w] = {32, 0, 0};
		for (unsigned int t = 0; t < block; t++) {
			getcontext(&gocu_ctx[t]);
			gocu_ctx[t].uc_stack.ss_sp = gocu_stack[t];
			gocu_ctx[t].uc_stack.ss_size = 1 << 16;
			gocu_ctx[t].uc_link = &gocu_sched;
			makecontext(&gocu_ctx[t], gocu_entry, 0);
			gocu_done[t] = false;
		}
		for (int live = block; live > 0;) {
			live = 0;
			for (unsigned int t = 0; t < block; t++) {
				if (gocu_done[t]) continue;
				gocu_cur = t;
				threadIdx.x = t;
				swapcontext(&gocu_sched, &gocu_ctx[t]);
				if (!gocu_done[t]) live++;
			}
		}
	}
	// The launch is over: every store is visible to the next one.
	for (auto &s : gocu_pending) gocu_write(s);
	gocu_pending.clear();
}
`

// ssHost builds one host program: buffers read from a file, launches of
// sort and scan kernels, buffers written back.
type ssHost struct {
	t       *testing.T
	decl    strings.Builder
	body    strings.Builder
	data    bytes.Buffer
	srcs    map[string]string // source -> its namespace
	kernels strings.Builder
	outs    []int // byte sizes of the outputs, in order
	n       int
}

func newSSHost(t *testing.T) *ssHost {
	clangtest.Need(t, "clang++-16")
	return &ssHost{t: t, srcs: map[string]string{}}
}

// input declares a buffer holding raw and returns its name. An empty one
// is a null pointer, as the GPU backend binds it.
func (h *ssHost) input(ctype string, raw []byte) string {
	name := fmt.Sprintf("b%d", h.n)
	h.n++
	fmt.Fprintf(&h.decl, "static %s *%s;\n", ctype, name)
	if len(raw) == 0 {
		fmt.Fprintf(&h.body, "\t%s = nullptr;\n", name)
		return name
	}
	h.data.Write(raw)
	fmt.Fprintf(&h.body, "\tif (posix_memalign((void**)&%s, 256, %d)) return 4;\n\tif (fread(%s, 1, %d, in) != %d) return 3;\n", name, len(raw), name, len(raw), len(raw))
	return name
}

// scratch declares a buffer of size bytes, poisoned with 0xa5 unless zero.
func (h *ssHost) scratch(ctype string, size int, zero bool) string {
	name := fmt.Sprintf("b%d", h.n)
	h.n++
	fmt.Fprintf(&h.decl, "static %s *%s;\n", ctype, name)
	fill := 0xa5
	if zero {
		fill = 0
	}
	fmt.Fprintf(&h.body, "\tif (posix_memalign((void**)&%s, 256, %d)) return 4;\n\tmemset(%s, %d, %d);\n", name, max(size, 1), name, fill, max(size, 1))
	return name
}

// launch queues k on grid blocks with the C++ argument expressions.
func (h *ssHost) launch(k *Kernel, grid int, args ...string) {
	ns, ok := h.srcs[k.Source]
	if !ok {
		ns = fmt.Sprintf("k%d", len(h.srcs))
		h.srcs[k.Source] = ns
		h.kernels.WriteString("namespace " + ns + " {\n" + k.Source + "\n}\n")
	}
	if grid < 1 {
		h.t.Fatalf("%s: grid of %d", k.Name, grid)
	}
	fmt.Fprintf(&h.body, "\tgocu_launch(%d, %d, [=] { %s::%s(%s); });\n", grid, k.Block, ns, k.Name, strings.Join(args, ", "))
}

// output writes size bytes of buffer name back.
func (h *ssHost) output(name string, size int) {
	if size > 0 {
		fmt.Fprintf(&h.body, "\tfwrite(%s, 1, %d, out);\n", name, size)
	}
	h.outs = append(h.outs, size)
}

// run compiles and runs the program and returns the outputs and what the
// harness reported on stderr (the look-back statistics).
func (h *ssHost) run() ([][]byte, string) {
	dir := h.t.TempDir()
	var all strings.Builder
	all.WriteString(ssHostPrelude)
	all.WriteString(h.decl.String())
	// Each kernel source redefines its typedefs: one namespace each.
	src := h.kernels.String()
	all.WriteString(src)
	all.WriteString("\nint main(int argc, char **argv) {\n\tFILE *in = fopen(argv[1], \"rb\"), *out = fopen(argv[2], \"wb\");\n\tgocu_init();\n")
	all.WriteString(h.body.String())
	all.WriteString("\tfclose(out);\n\tfprintf(stderr, \"deferred %llu spins %llu\\n\", gocu_deferred, gocu_spins);\n\treturn 0;\n}\n")
	srcPath := filepath.Join(dir, "ss.cpp")
	if err := os.WriteFile(srcPath, []byte(all.String()), 0o600); err != nil {
		h.t.Fatal(err)
	}
	if os.Getenv("GOCU_KEEP_HOST_SOURCE") != "" {
		os.WriteFile("/tmp/ss.cpp", []byte(all.String()), 0o600)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.bin"), h.data.Bytes(), 0o600); err != nil {
		h.t.Fatal(err)
	}
	bin := filepath.Join(dir, "ss")
	args := append([]string{"-std=c++20", "-O1", "-ffp-contract=off", "-w"}, sanitizerFlags(h.t)...)
	if out, err := exec.Command("clang++-16", append(args, "-o", bin, srcPath)...).CombinedOutput(); err != nil {
		h.t.Fatalf("host compile: %v\n%s", err, firstLines(string(out), 30))
	}
	outPath := filepath.Join(dir, "out.bin")
	msg, err := sanitizedRun(bin, filepath.Join(dir, "in.bin"), outPath).CombinedOutput()
	if err != nil {
		h.t.Fatalf("host run: %v\n%s", err, firstLines(string(msg), 40))
	}
	got, err := os.ReadFile(outPath)
	if err != nil {
		h.t.Fatal(err)
	}
	var res [][]byte
	off := 0
	for _, n := range h.outs {
		res = append(res, got[off:off+n])
		off += n
	}
	return res, string(msg)
}

func rawLE(v any) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, v)
	return b.Bytes()
}

// scanRef is the reference scan of one row.
func scanRef[T int32 | int64 | uint8 | float32 | float64](x []T, kind backend.ScanKind, rev bool) []T {
	out := make([]T, len(x))
	isNaN := func(v T) bool { return v != v }
	for q := range x {
		i := q
		if rev {
			i = len(x) - 1 - q
		}
		if q == 0 {
			out[i] = x[i]
			continue
		}
		p := i - 1
		if rev {
			p = i + 1
		}
		a, b := out[p], x[i]
		switch kind {
		case backend.CumSum:
			out[i] = a + b
		case backend.CumProd:
			out[i] = a * b
		case backend.CumMax:
			if isNaN(a) || a >= b {
				out[i] = a
			} else {
				out[i] = b
			}
		default:
			if isNaN(a) || a <= b {
				out[i] = a
			} else {
				out[i] = b
			}
		}
	}
	return out
}

// TestScanHost runs the row scan on the host with delayed status stores:
// several dtypes and operations, lengths around the tile, several rows,
// reversed, misaligned (the scalar path) and aligned (the vector path),
// into poisoned outputs, compared exactly with a sequential scan.
func TestScanHost(t *testing.T) {
	h := newSSHost(t)
	r := rand.New(rand.NewPCG(7, 19))
	type check func(raw []byte) error
	var checks []check
	var names []string
	add := func(name string, dt backend.DType, kind backend.ScanKind, rows, length, off int, rev bool, in any, want any) {
		ks := ScanKernels(dt, kind)
		per := (length + ks.Tile - 1) / ks.Tile
		tiles := rows * per
		if tiles == 0 {
			return
		}
		ct := ctype(dt)
		b := h.input(ct, rawLE(in))
		outName := h.scratch(ct, (off+rows*length)*dt.Size(), false)
		st := h.scratch("unsigned long long", 8*(tiles+1), true)
		aux := "nullptr"
		if !ks.Packed {
			aux = h.scratch(ct, 2*tiles*dt.Size(), false)
		}
		h.launch(ks.Rows, tiles, fmt.Sprintf("%s + %d", b, off), fmt.Sprintf("%s + %d", outName, off), fmt.Sprint(length), fmt.Sprint(per),
			fmt.Sprint(flag01(rev)), fmt.Sprint(tiles), st, aux)
		h.output(outName, (off+rows*length)*dt.Size())
		wantRaw := rawLE(want)
		names = append(names, name)
		checks = append(checks, func(raw []byte) error {
			got := raw[off*dt.Size():]
			for i := 0; i < len(wantRaw); i += dt.Size() {
				if !bytes.Equal(got[i:i+dt.Size()], wantRaw[i:i+dt.Size()]) {
					return fmt.Errorf("element %d: % x, want % x", i/dt.Size(), got[i:i+dt.Size()], wantRaw[i:i+dt.Size()])
				}
			}
			return nil
		})
	}
	f32 := func(name string, kind backend.ScanKind, rows, length, off int, rev bool, gen func() float32) {
		x := make([]float32, off+rows*length)
		for i := range x {
			x[i] = gen()
		}
		var want []float32
		for row := range rows {
			want = append(want, scanRef(x[off+row*length:off+(row+1)*length], kind, rev)...)
		}
		add(name, backend.Float32, kind, rows, length, off, rev, x, want)
	}
	i64 := func(name string, kind backend.ScanKind, rows, length, off int, rev bool) {
		x := make([]int64, off+rows*length)
		for i := range x {
			x[i] = int64(r.Uint64())
		}
		var want []int64
		for row := range rows {
			want = append(want, scanRef(x[off+row*length:off+(row+1)*length], kind, rev)...)
		}
		add(name, backend.Int64, kind, rows, length, off, rev, x, want)
	}
	small := func() float32 { return float32(r.IntN(64) - 32) }
	nanny := func() float32 {
		if r.IntN(9000) == 0 {
			return float32(math.NaN())
		}
		return r.Float32()*2 - 1
	}
	const tile = ScanBlock * 16
	for _, c := range []struct {
		rows, length, off int
		rev               bool
	}{
		{1, 1, 0, false}, {1, tile - 1, 0, false}, {1, tile, 0, false}, {1, tile + 1, 1, false},
		{1, 37 * tile, 0, false}, {1, 37*tile + 3, 1, false}, {1, 5*tile + 17, 0, true}, {3, 3*tile + 5, 0, false}, {4, 2 * tile, 0, true},
		{40, 33, 0, false},
	} {
		f32(fmt.Sprintf("cumsum f32 %+v", c), backend.CumSum, c.rows, c.length, c.off, c.rev, small)
	}
	f32("cummax f32 NaN", backend.CumMax, 1, 41*tile+9, 0, false, nanny)
	f32("cummin f32 NaN rows", backend.CumMin, 3, 6*tile+1, 1, true, nanny)
	f32("cumsum -0", backend.CumSum, 2, 3, 0, false, func() float32 { return float32(math.Copysign(0, -1)) })
	i64("cumsum i64 wraps", backend.CumSum, 1, 35*2048+7, 0, false)
	i64("cumprod i64 rows", backend.CumProd, 3, 3*2048, 0, true)
	{
		x := make([]int32, 40*tile+5)
		for i := range x {
			x[i] = int32(r.Uint32())
		}
		add("cumprod i32 wraps", backend.Int32, backend.CumProd, 1, len(x), 0, false, x, scanRef(x, backend.CumProd, false))
		y := make([]uint8, 3*tile+77)
		for i := range y {
			y[i] = uint8(r.Uint32())
		}
		add("cummax u8", backend.Uint8, backend.CumMax, 1, len(y), 0, false, y, scanRef(y, backend.CumMax, false))
		z := make([]float64, 34*2048+1)
		for i := range z {
			z[i] = float64(r.IntN(1000) - 500)
		}
		add("cumsum f64", backend.Float64, backend.CumSum, 1, len(z)-1, 1, false, z, scanRef(z[1:], backend.CumSum, false))
	}
	outs, msg := h.run()
	for i, c := range checks {
		if err := c(outs[i]); err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
	}
	t.Logf("harness: %s", strings.TrimSpace(msg))
	if !strings.Contains(msg, "spins") || strings.Contains(msg, "spins 0\n") {
		t.Errorf("the look-back never waited: %s", msg)
	}
}

// sortOrder is the unsigned key of element i of raw (dtype dt) whose order
// is the sort's, as ss_key maps it.
func sortOrder(dt backend.DType, raw []byte, i int) uint64 {
	sz := dt.Size()
	var u uint64
	for b := sz - 1; b >= 0; b-- {
		u = u<<8 | uint64(raw[i*sz+b])
	}
	switch dt {
	case backend.Float32:
		f := math.Float32frombits(uint32(u))
		if f != f {
			return math.MaxUint32
		}
		if u>>31 != 0 {
			return ^u & math.MaxUint32
		}
		return u | 1<<31
	case backend.Float64:
		f := math.Float64frombits(u)
		if f != f {
			return math.MaxUint64
		}
		if u>>63 != 0 {
			return ^u
		}
		return u | 1<<63
	case backend.Int32:
		return u ^ 1<<31
	case backend.Int64:
		return u ^ 1<<63
	case backend.Bool:
		if u != 0 {
			return 1
		}
	}
	return u
}

// sortRef returns, for each row, the stable sorting permutation (by
// positions in the row) and the sorted keys' bytes, NaN as the quiet NaN.
func sortRef(dt backend.DType, raw []byte, rows, length int, desc bool) (keys []byte, pos []int64) {
	sz := dt.Size()
	for row := range rows {
		idx := make([]int, length)
		for i := range idx {
			idx[i] = row*length + i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			ka, kb := sortOrder(dt, raw, idx[a]), sortOrder(dt, raw, idx[b])
			if desc {
				return ka > kb
			}
			return ka < kb
		})
		for _, i := range idx {
			e := raw[i*sz : (i+1)*sz]
			switch {
			case dt == backend.Float32 && sortOrder(dt, raw, i) == math.MaxUint32:
				e = rawLE(uint32(0x7fc00000))
			case dt == backend.Float64 && sortOrder(dt, raw, i) == math.MaxUint64:
				e = rawLE(uint64(0x7ff8000000000000))
			case dt == backend.Bool && e[0] != 0:
				e = []byte{1}
			}
			keys = append(keys, e...)
			pos = append(pos, int64(i-row*length))
		}
	}
	return keys, pos
}

// TestSortHost runs the onesweep radix sort on the host, launch for launch
// as the GPU backend does, with delayed look-back stores: keys only, with
// positions, rows, descending, a payload, every key dtype, lengths around
// the tile, ties, NaN and -0, and the 64-bit statuses of wide sorts.
func TestSortHost(t *testing.T) {
	h := newSSHost(t)
	r := rand.New(rand.NewPCG(3, 5))
	type sortCase struct {
		dt         backend.DType
		rows, len  int
		desc, pos  bool
		vals, wide bool
		same       bool // every key equal: passes skipped
		high       bool // int64 keys with low bytes 0: the first passes skipped
	}
	var checks []func(outs [][]byte) error
	var names []string
	var nOut int
	gen := func(dt backend.DType, n int) []byte {
		var b []byte
		for range n {
			switch dt {
			case backend.Float32:
				v := float32(r.IntN(50)-25) / 4
				switch r.IntN(40) {
				case 0:
					v = float32(math.NaN())
				case 1:
					v = float32(math.Copysign(0, -1))
				case 2:
					v = float32(math.Inf(-1))
				case 3:
					v = float32(-math.NaN()) // the sign bit set
				case 4:
					v = r.Float32() * 1e30
				}
				b = append(b, rawLE(math.Float32bits(v))...)
			case backend.Float64:
				v := r.NormFloat64()
				switch r.IntN(20) {
				case 0:
					v = math.NaN()
				case 1:
					v = math.Copysign(0, -1)
				case 2:
					v = 0
				}
				b = append(b, rawLE(math.Float64bits(v))...)
			case backend.Int32:
				b = append(b, rawLE(int32(r.IntN(70000)-300))...)
			case backend.Int64:
				b = append(b, rawLE(int64(r.Uint64()))...)
			case backend.Uint8:
				b = append(b, byte(r.Uint32()))
			default:
				b = append(b, byte(r.IntN(2))) // a bool is 0 or 1
			}
		}
		return b
	}
	add := func(c sortCase) {
		n := c.rows * c.len
		raw := gen(c.dt, n)
		if c.high {
			raw = nil
			for range n {
				raw = append(raw, rawLE(int64(r.IntN(2000)-1000)<<20)...)
			}
		}
		if c.same {
			for i := range raw {
				raw[i] = raw[i%c.dt.Size()]
			}
		}
		vsize := 8
		var vraw []byte
		if c.vals {
			vsize = 2
			for i := range n {
				vraw = append(vraw, rawLE(uint16(i*7+1))...)
			}
		}
		ks := SortKernels(c.dt, vsize, c.wide)
		seg := c.rows > 1 && c.len >= SortTile/2 // as the GPU backend chooses
		var passes [][2]int
		for by := 0; by < c.dt.Size(); by++ {
			passes = append(passes, [2]int{8 * by, 0})
		}
		rpass := 0
		for sh := 0; !seg && sh < bits.Len(uint(c.rows-1)); sh += 8 {
			passes = append(passes, [2]int{sh, 1})
			rpass++
		}
		kt := keyUnsigned(c.dt)
		in := h.input(ctype(c.dt), raw)
		keysOnly := (c.rows == 1 || seg) && !c.pos && !c.vals
		k0, k1 := h.scratch(kt, n*max(c.dt.Size(), 4), false), h.scratch(kt, n*max(c.dt.Size(), 4), false)
		p0, p1 := "nullptr", "nullptr"
		if !keysOnly {
			p0, p1 = h.scratch("unsigned int", 4*n, false), h.scratch("unsigned int", 4*n, false)
		}
		nb, tpr, gstride := (n+SortTile-1)/SortTile, 0, 0
		if seg {
			tpr = (c.len + SortTile - 1) / SortTile
			nb = c.rows * tpr
			gstride = c.dt.Size() * 256
		}
		stw := 4
		if c.wide {
			stw = 8
		}
		st0, st1 := h.scratch("void", stw*(nb*256+1), true), h.scratch("void", stw*(nb*256+1), false)
		ctl := h.scratch("int", 4*32, false)
		st := "unsigned int"
		if c.wide {
			st = "unsigned long long"
		}
		outk := h.scratch(ctype(c.dt), n*c.dt.Size(), false)
		outp, vals, outv := "nullptr", "nullptr", "nullptr"
		if c.pos && !c.vals {
			outp = h.scratch("long long", 8*n, false)
		}
		if c.vals {
			vals = h.input("unsigned short", vraw)
			outv = h.scratch("unsigned short", 2*n, false)
		}
		var goff string
		if seg {
			goff = h.scratch("unsigned int", 4*c.rows*gstride, true)
			clen := 3000 // several chunks a row
			cpr := (c.len + clen - 1) / clen
			h.launch(ks.RHist, c.rows*cpr, in, fmt.Sprint(c.len), fmt.Sprint(flag01(c.desc)), goff, fmt.Sprint(cpr), fmt.Sprint(clen))
			h.launch(ks.RPlan, c.rows, goff, fmt.Sprint(c.len), ctl)
		} else {
			ghist := h.scratch("unsigned int", 4*256*len(passes), true)
			goff = h.scratch("unsigned int", 4*256*len(passes), false)
			h.launch(ks.GHist, 2, in, fmt.Sprint(n), fmt.Sprint(flag01(c.desc)), ghist, fmt.Sprint(c.len), fmt.Sprint(rpass))
			h.launch(ks.Plan, 1, ghist, fmt.Sprint(n), fmt.Sprint(len(passes)), ctl, goff)
		}
		for pi, ps := range passes {
			h.launch(ks.Pass, nb, in, k0, k1, p0, p1, goff, fmt.Sprintf("(%s*)%s", st, st0), fmt.Sprintf("(%s*)%s", st, st1),
				fmt.Sprint(n), fmt.Sprint(ps[0]), fmt.Sprint(ps[1]), fmt.Sprint(c.len), ctl, fmt.Sprint(pi), fmt.Sprint(nb),
				outk, outp, vals, outv, fmt.Sprint(flag01(c.desc)), fmt.Sprint(tpr), fmt.Sprint(gstride))
		}
		h.launch(ks.Finish, 2, in, outk, outp, vals, outv, fmt.Sprint(n), fmt.Sprint(c.len), ctl)
		h.output(outk, n*c.dt.Size())
		wantK, wantP := sortRef(c.dt, raw, c.rows, c.len, c.desc)
		ik, ip := nOut, nOut+1
		nOut++
		switch {
		case c.vals:
			h.output(outv, 2*n)
			nOut++
		case c.pos:
			h.output(outp, 8*n)
			nOut++
		}
		names = append(names, fmt.Sprintf("%+v", c))
		checks = append(checks, func(outs [][]byte) error {
			sz := c.dt.Size()
			for i := 0; i < n; i++ {
				if !bytes.Equal(outs[ik][i*sz:(i+1)*sz], wantK[i*sz:(i+1)*sz]) {
					return fmt.Errorf("key %d: % x, want % x", i, outs[ik][i*sz:(i+1)*sz], wantK[i*sz:(i+1)*sz])
				}
			}
			for i := 0; i < n && (c.pos || c.vals); i++ {
				row := i / c.len
				var got, want int64
				if c.vals {
					got = int64(binary.LittleEndian.Uint16(outs[ip][2*i:]))
					want = int64(uint16((int64(row*c.len)+wantP[i])*7 + 1))
				} else {
					got, want = int64(binary.LittleEndian.Uint64(outs[ip][8*i:])), wantP[i]
				}
				if got != want {
					return fmt.Errorf("position %d: %d, want %d", i, got, want)
				}
			}
			return nil
		})
	}
	for _, c := range []sortCase{
		{dt: backend.Float32, rows: 1, len: 1},
		{dt: backend.Float32, rows: 1, len: SortTile - 1},
		{dt: backend.Float32, rows: 1, len: SortTile + 1, pos: true},
		{dt: backend.Float32, rows: 1, len: 6*SortTile + 333},
		{dt: backend.Float32, rows: 1, len: 5*SortTile + 7, pos: true, desc: true},
		{dt: backend.Float32, rows: 300, len: 70, pos: true},
		{dt: backend.Float32, rows: 3, len: 2*SortTile + 9, vals: true},
		{dt: backend.Float64, rows: 1, len: 3*SortTile + 5, pos: true},
		{dt: backend.Float64, rows: 2, len: SortTile, desc: true},
		{dt: backend.Int32, rows: 1, len: 7*SortTile + 1},
		{dt: backend.Int32, rows: 1, len: 4*SortTile + 1, pos: true, wide: true},
		{dt: backend.Int64, rows: 1, len: 2*SortTile + 100, pos: true},
		{dt: backend.Uint8, rows: 5, len: 999, pos: true},
		{dt: backend.Bool, rows: 1, len: 3*SortTile - 1, pos: true, desc: true},
		{dt: backend.Bool, rows: 1, len: 77},
		{dt: backend.Int32, rows: 1, len: 2*SortTile + 1, pos: true, same: true},
		{dt: backend.Float32, rows: 1, len: 3, same: true},
		{dt: backend.Int64, rows: 2, len: SortTile + 3, vals: true, same: true},
		{dt: backend.Float32, rows: 4, len: SortTile / 2},
		{dt: backend.Uint8, rows: 1, len: 37*SortTile + 5, pos: true}, // long look-backs
		{dt: backend.Int64, rows: 1, len: 3*SortTile + 2, pos: true, desc: true, high: true},
		{dt: backend.Int64, rows: 1, len: 2*SortTile + 5, high: true},
		{dt: backend.Float32, rows: 3, len: 3*SortTile + 1, desc: true},
		{dt: backend.Int32, rows: 5, len: 3000, pos: true},
		{dt: backend.Float32, rows: 2, len: 7000, pos: true, wide: true},
	} {
		add(c)
	}
	outs, msg := h.run()
	for i, c := range checks {
		if err := c(outs); err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
	}
	t.Logf("harness: %s", strings.TrimSpace(msg))
	if strings.Contains(msg, "spins 0\n") {
		t.Errorf("the look-back never waited: %s", msg)
	}
}

// TestTopKHost runs the radix-select top-k on the host: one block a row,
// and segments then candidates as the GPU backend launches them for long
// rows; largest and smallest, ties (the earlier first), NaN (the largest
// value), every key dtype, into poisoned outputs.
func TestTopKHost(t *testing.T) {
	h := newSSHost(t)
	r := rand.New(rand.NewPCG(11, 13))
	var checks []func(outs [][]byte) error
	var names []string
	nOut := 0
	type topkCase struct {
		dt            backend.DType
		rows, len, k  int
		seg           int // the longest segment; 0: TopKSeg
		largest, ties bool
	}
	for _, c := range []topkCase{
		{dt: backend.Float32, rows: 3, len: 1000, k: 37, largest: true},
		{dt: backend.Float32, rows: 2, len: 999, k: 50, ties: true},
		{dt: backend.Float32, rows: 1, len: 20000, k: 100, seg: 4096, largest: true},
		{dt: backend.Float32, rows: 2, len: 9000, k: 64, seg: 4096, ties: true, largest: true},
		{dt: backend.Float32, rows: 1, len: 9000, k: 300, seg: 4096, ties: true},
		{dt: backend.Float64, rows: 2, len: 700, k: 700, largest: true},
		{dt: backend.Int32, rows: 1, len: 5000, k: 9, seg: 2048, ties: true},
		{dt: backend.Int64, rows: 4, len: 300, k: 1, largest: true},
		{dt: backend.Uint8, rows: 2, len: 3000, k: 20, ties: true, largest: true},
		{dt: backend.Bool, rows: 1, len: 500, k: 10, ties: true},
		{dt: backend.Float32, rows: 1, len: 5, k: 5, largest: true},
		{dt: backend.Float32, rows: 1, len: 20000, k: 100, seg: 1024, ties: true}, // three rounds
		{dt: backend.Float32, rows: 2, len: 30000, k: 30, largest: true},          // TopKSeg
		{dt: backend.Float64, rows: 1, len: 7000, k: 1024, largest: true},
		{dt: backend.Int32, rows: 1, len: 9000, k: 1024, ties: true},
	} {
		n := c.rows * c.len
		var raw []byte
		for range n {
			switch c.dt {
			case backend.Float32:
				v := r.Float32()
				if c.ties {
					v = float32(r.IntN(40))
				}
				if r.IntN(300) == 0 {
					v = float32(math.NaN())
				}
				raw = append(raw, rawLE(math.Float32bits(v))...)
			case backend.Float64:
				raw = append(raw, rawLE(math.Float64bits(r.NormFloat64()))...)
			case backend.Int32:
				raw = append(raw, rawLE(int32(r.IntN(100)-50))...)
			case backend.Int64:
				raw = append(raw, rawLE(int64(r.Uint64()))...)
			case backend.Uint8:
				raw = append(raw, byte(r.IntN(256)))
			default:
				raw = append(raw, byte(r.IntN(2)))
			}
		}
		k := TopKKernel(c.dt)
		ct, kt := ctype(c.dt), keyUnsigned(c.dt)
		in := h.input(ct, raw)
		outk := h.scratch(ct, c.rows*c.k*c.dt.Size(), false)
		outi := h.scratch("long long", c.rows*c.k*8, false)
		lg := fmt.Sprint(flag01(c.largest))
		// Rounds of segments until a row fits one, as the GPU backend runs.
		seg := c.seg
		if seg == 0 {
			seg = TopKSeg(c.dt)
		}
		src, ck, ci := in, "nullptr", "nullptr"
		for n := c.len; ; {
			if n <= seg {
				h.launch(k, c.rows, src, ck, ci, fmt.Sprint(n), fmt.Sprint(n), "1", fmt.Sprint(c.k), lg, "nullptr", "nullptr", outk, outi)
				break
			}
			segs := (n + seg - 1) / seg
			nc := c.rows * segs * c.k
			ck2 := h.scratch(kt, nc*max(c.dt.Size(), 4), false)
			ci2 := h.scratch("long long", nc*8, false)
			h.launch(k, c.rows*segs, src, ck, ci, fmt.Sprint(n), fmt.Sprint(seg), fmt.Sprint(segs), fmt.Sprint(c.k), lg, ck2, ci2, "nullptr", "nullptr")
			src, ck, ci, n = "nullptr", ck2, ci2, segs*c.k
		}
		h.output(outk, c.rows*c.k*c.dt.Size())
		h.output(outi, c.rows*c.k*8)
		ik, ii := nOut, nOut+1
		nOut += 2
		// The reference: the stable sort of each row, descending for the
		// largest, NaN as the largest value; its first k.
		wantK, wantP := sortRef(c.dt, raw, c.rows, c.len, c.largest)
		names = append(names, fmt.Sprintf("%+v", c))
		checks = append(checks, func(outs [][]byte) error {
			sz := c.dt.Size()
			for row := range c.rows {
				for j := range c.k {
					g := (row*c.k + j) * sz
					w := (row*c.len + j) * sz
					if !bytes.Equal(outs[ik][g:g+sz], wantK[w:w+sz]) {
						return fmt.Errorf("row %d value %d: % x, want % x", row, j, outs[ik][g:g+sz], wantK[w:w+sz])
					}
					gi := int64(binary.LittleEndian.Uint64(outs[ii][8*(row*c.k+j):]))
					if wi := wantP[row*c.len+j]; gi != wi {
						return fmt.Errorf("row %d index %d: %d, want %d", row, j, gi, wi)
					}
				}
			}
			return nil
		})
	}
	outs, _ := h.run()
	for i, c := range checks {
		if err := c(outs); err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
	}
}

// TestUniqueGroupsHost runs Unique's group scan on the host: sorted runs
// of every dtype (NaN equal to NaN at the end of floats), lengths around
// the tile, delayed look-back stores.
func TestUniqueGroupsHost(t *testing.T) {
	h := newSSHost(t)
	r := rand.New(rand.NewPCG(5, 8))
	var checks []func(outs [][]byte) error
	var names []string
	for ci, c := range []struct {
		dt backend.DType
		n  int
	}{
		{backend.Float32, 1}, {backend.Float32, 9*4096 + 5}, {backend.Float64, 3*4096 - 1}, {backend.Int32, 4096},
		{backend.Int64, 2*4096 + 3}, {backend.Uint8, 5000}, {backend.Bool, 4097},
	} {
		// Sorted values with runs: a walk that repeats or steps up, NaN
		// (all one run) at the end of floats.
		var raw []byte
		v := 0
		for i := range c.n {
			if r.IntN(3) == 0 {
				v++
			}
			nan := c.dt.IsFloat() && i >= c.n-c.n/8
			switch c.dt {
			case backend.Float32:
				f := float32(v) / 4
				if nan {
					f = float32(math.NaN())
				}
				raw = append(raw, rawLE(math.Float32bits(f))...)
			case backend.Float64:
				f := float64(v) - 1e3
				if nan {
					f = math.NaN()
				}
				raw = append(raw, rawLE(math.Float64bits(f))...)
			case backend.Int32:
				raw = append(raw, rawLE(int32(v-2000))...)
			case backend.Int64:
				raw = append(raw, rawLE(int64(v)<<40)...)
			case backend.Uint8:
				raw = append(raw, byte(v*255/c.n))
			default:
				raw = append(raw, byte(min(v, 1)))
			}
		}
		// Equal values (NaN equal to NaN) have equal sort keys here.
		want := make([]int32, c.n)
		for i := range c.n {
			want[i] = 1
			if i > 0 {
				want[i] = want[i-1]
				if sortOrder(c.dt, raw, i) != sortOrder(c.dt, raw, i-1) {
					want[i]++
				}
			}
		}
		ks := UniqueKernels(c.dt).Groups
		tiles := (c.n + ks.Tile - 1) / ks.Tile
		in := h.input(ctype(c.dt), raw)
		out := h.scratch("int", 4*c.n, false)
		st := h.scratch("unsigned long long", 8*(tiles+1), true)
		h.launch(ks.Rows, tiles, in, out, fmt.Sprint(c.n), fmt.Sprint(tiles), "0", fmt.Sprint(tiles), st, "nullptr")
		h.output(out, 4*c.n)
		names = append(names, fmt.Sprintf("%v[%d]", c.dt, c.n))
		checks = append(checks, func(outs [][]byte) error {
			for i, w := range want {
				if got := int32(binary.LittleEndian.Uint32(outs[ci][4*i:])); got != w {
					return fmt.Errorf("element %d: group %d, want %d", i, got, w)
				}
			}
			return nil
		})
	}
	outs, _ := h.run()
	for i, c := range checks {
		if err := c(outs); err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
	}
}
