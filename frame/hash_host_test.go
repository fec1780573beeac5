package frame

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/clangtest"
)

// The hash kernels' CUDA C compiled as host C++ with clang++-16 and run
// with a thread per CUDA thread (a block's threads together, blocks one
// after another), checked against Go references without a GPU.

const hashHostPrelude = `#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>
#define GOCU_HOST
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
struct gocu_dim3 { unsigned x = 0, y = 1, z = 1; };
static thread_local gocu_dim3 threadIdx;
static gocu_dim3 blockIdx, blockDim, gridDim;
static std::barrier<>* gocu_block;
static std::mutex gocu_atomic;
static std::vector<unsigned long long> gocu_smem;
#define GOCU_SHARED(type, name) type* name = (type*)gocu_smem.data()
static void __syncthreads() { gocu_block->arrive_and_wait(); }
template <class T> static T gocu_locked(T* p, T v, int op) {
    std::lock_guard<std::mutex> g(gocu_atomic);
    T old = *p;
    if (op == 0) *p = old + v;
    if (op == 1 && v > old) *p = v;
    if (op == 2 && v < old) *p = v;
    return old;
}
static unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return gocu_locked(p, v, 0); }
static double atomicAdd(double* p, double v) { return gocu_locked(p, v, 0); }
static int atomicMax(int* p, int v) { return gocu_locked(p, v, 1); }
static int atomicMin(int* p, int v) { return gocu_locked(p, v, 2); }
static long long atomicMax(long long* p, long long v) { return gocu_locked(p, v, 1); }
static long long atomicMin(long long* p, long long v) { return gocu_locked(p, v, 2); }
template <class T> static T atomicCAS(T* p, T cmp, T v) {
    std::lock_guard<std::mutex> g(gocu_atomic);
    T old = *p;
    if (old == cmp) *p = v;
    return old;
}
static float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
`

const hashHostMain = `
template <class F> static void launch(unsigned grid, unsigned block, size_t smem, F f) {
    gridDim.x = grid;
    blockDim.x = block;
    for (unsigned b = 0; b < grid; b++) {
        blockIdx.x = b;
        gocu_smem.assign(smem / 8 + 1, 0x7ff8dead7ff8deadULL); // poisoned
        std::barrier<> bar(block);
        gocu_block = &bar;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < block; t++) ts.emplace_back([t, &f] { threadIdx.x = t; f(); });
        for (auto& t : ts) t.join();
    }
}

template <class V> static std::vector<V> in(size_t n) {
    std::vector<V> v(n);
    if (n && fread(v.data(), sizeof(V), n, stdin) != n) { fprintf(stderr, "short input\n"); _exit(2); }
    return v;
}

template <class V> static void out(const std::vector<V>& v) { fwrite(v.data(), sizeof(V), v.size(), stdout); }
`

// hashHostRun runs a table or group operation of one variant of the
// kernels: argv[1] names it.
const hashHostRun = `
int run(int argc, char** argv) {
    std::string op = argv[1];
    long long n = atoll(argv[2]);
    unsigned grid = atoi(argv[4]), block = atoi(argv[5]);
    if (op == "hash") {
        long long cap = atoll(argv[3]);
        auto key = in<K>(n); auto probe = in<K>(n); auto empty = in<i64>(1);
        std::vector<i64> slots(cap, empty[0]), slot(n, -7), found(n, -7);
        launch(grid, block, 0, [&] { gocu_hash_insert(key.data(), n, slots.data(), cap - 1, empty[0], slot.data()); });
        launch(grid, block, 0, [&] { gocu_hash_find(probe.data(), n, slots.data(), cap - 1, empty[0], found.data()); });
        out(slots); out(slot); out(found);
    } else if (op == "group") {
        int g = atoi(argv[3]);
        i64 off = atoll(argv[6]);
        auto id = in<K>(n); auto x = in<T>(n); auto ok = in<unsigned char>(n); auto has = in<int>(1);
        auto lo = in<T>(1); auto hi = in<T>(1);
        std::vector<A> sum(g, 0); std::vector<i64> cnt(g, 0), first(g, n);
        std::vector<T> mx(g, lo[0]), mn(g, hi[0]);
        size_t sm = g * 8;
        launch(grid, block, sm, [&] { gocu_group_sum(id.data(), off, x.data(), ok.data(), has[0], n, sum.data(), g); });
        launch(grid, block, sm, [&] { gocu_group_count(id.data(), off, ok.data(), has[0], n, cnt.data(), g); });
        launch(grid, block, sm, [&] { gocu_group_first(id.data(), off, n, first.data(), g); });
        launch(grid, block, sm, [&] { gocu_group_extreme(id.data(), off, x.data(), ok.data(), has[0], n, mx.data(), g, 1); });
        launch(grid, block, sm, [&] { gocu_group_extreme(id.data(), off, x.data(), ok.data(), has[0], n, mn.data(), g, 0); });
        out(sum); out(cnt); out(first); out(mx); out(mn);
    }
    return 0;
}
`

// hostVariant is one compilation of the kernels: values of dt, keys of
// dtype key.
type hostVariant struct{ dt, key array.DType }

func (v hostVariant) name() string { return "v_" + v.dt.String() + "_" + v.key.String() }

// hostVariants are the variants the host tests run.
var hostVariants = []hostVariant{{array.Float64, array.Int64}, {array.Float64, array.Int32}, {array.Int32, array.Int32},
	{array.Int64, array.Int64}, {array.Float32, array.Int32}}

// hashHostBinary compiles every variant of the hash kernels into one host
// program, each in a namespace of its name (once: the compile is slow).
func hashHostBinary(t *testing.T) string {
	t.Helper()
	clang := clangtest.Need(t, "clang++-16")
	var src strings.Builder
	src.WriteString(hashHostPrelude + hashHostMain)
	dispatch := "int main(int argc, char** argv) {\n    std::string v = argv[1];\n"
	for _, v := range hostVariants {
		// The kernels' C names would clash across namespaces.
		k := strings.ReplaceAll(hashSource(v.dt, v.key), `extern "C" `, "")
		fmt.Fprintf(&src, "namespace %s {\n%s%s}\n", v.name(), k, hashHostRun)
		dispatch += fmt.Sprintf("    if (v == %q) return %s::run(argc - 1, argv + 1);\n", v.name(), v.name())
	}
	src.WriteString(dispatch + "    return 2;\n}\n")
	dir := t.TempDir()
	path := filepath.Join(dir, "hash.cc")
	if err := os.WriteFile(path, []byte(src.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hash")
	msg, err := exec.Command(clang, "-std=c++20", "-O0", "-pthread", "-w", "-o", bin, path).CombinedOutput()
	if err != nil {
		t.Fatalf("clang++: %v\n%s", err, msg)
	}
	return bin
}

func runHashHost(t *testing.T, bin string, in []byte, args ...any) *bytes.Reader {
	t.Helper()
	var s []string
	for _, a := range args {
		s = append(s, fmt.Sprint(a))
	}
	cmd := exec.Command(bin, s...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, s, err, errb.String())
	}
	return bytes.NewReader(out.Bytes())
}

func readN[T any](t *testing.T, r *bytes.Reader, n int) []T {
	t.Helper()
	v := make([]T, n)
	if err := binary.Read(r, binary.LittleEndian, v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestHashKernelsHost inserts keys with many repeats (and extreme values)
// into the table from several threads at once, then checks that every
// distinct key has one slot and that lookups find exactly the keys in.
// The same program then checks the group kernels (testGroupKernels).
func TestHashKernelsHost(t *testing.T) {
	bin := hashHostBinary(t)
	for _, dt := range []array.DType{array.Int64, array.Int32} {
		t.Run("table/"+dt.String(), func(t *testing.T) { testHashKernels(t, bin, dt) })
	}
	t.Run("groups", func(t *testing.T) { testGroupKernels(t, bin) })
}

func testHashKernels(t *testing.T, bin string, dt array.DType) {
	variant := hostVariant{array.Float64, dt}.name()
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		n, distinct, cap int
		empty            int64
	}{{1, 1, 1024, -1}, {500, 37, 1024, math.MinInt64}, {700, 700, 2048, 5}, {300, 120, 256, math.MaxInt64}} {
		keys := make([]int64, tc.n)
		pool := make([]int64, tc.distinct)
		for i := range pool {
			for {
				pool[i] = int64(r.Uint64())
				if dt == array.Int32 {
					pool[i] = int64(int32(pool[i]))
				}
				if i%5 == 1 {
					pool[i] = int64(r.IntN(1000)) - 500 // small keys collide in the low bits
				}
				if pool[i] != tc.empty {
					break
				}
			}
		}
		if tc.distinct > 2 && dt == array.Int64 {
			pool[2] = math.MinInt64 + 1
		}
		for i := range keys {
			keys[i] = pool[r.IntN(len(pool))]
		}
		in := map[int64]bool{}
		for _, k := range keys {
			in[k] = true
		}
		probe := make([]int64, tc.n)
		for i := range probe {
			switch i % 3 {
			case 0:
				probe[i] = keys[r.IntN(tc.n)]
			case 1:
				probe[i] = int64(r.Uint64())
				if dt == array.Int32 {
					probe[i] = int64(int32(probe[i]))
				}
			default:
				probe[i] = tc.empty
				if dt == array.Int32 && int64(int32(tc.empty)) != tc.empty {
					probe[i] = -12345
				}
			}
		}
		var buf bytes.Buffer
		if dt == array.Int32 {
			for _, v := range append(append([]int64{}, keys...), probe...) {
				binary.Write(&buf, binary.LittleEndian, int32(v))
			}
		} else {
			binary.Write(&buf, binary.LittleEndian, keys)
			binary.Write(&buf, binary.LittleEndian, probe)
		}
		binary.Write(&buf, binary.LittleEndian, tc.empty)
		out := runHashHost(t, bin, buf.Bytes(), variant, "hash", tc.n, tc.cap, 3, 64)
		slots := readN[int64](t, out, tc.cap)
		slot := readN[int64](t, out, tc.n)
		found := readN[int64](t, out, tc.n)
		used := 0
		for _, s := range slots {
			if s != tc.empty {
				used++
				if !in[s] {
					t.Fatalf("n %d: slot holds %d, not a key", tc.n, s)
				}
			}
		}
		if used != len(in) {
			t.Errorf("n %d: %d slots used for %d distinct keys", tc.n, used, len(in))
		}
		slotOf := map[int64]int64{}
		for i, k := range keys {
			s := slot[i]
			if s < 0 || s >= int64(tc.cap) || slots[s] != k {
				t.Fatalf("n %d: key %d at slot %d", tc.n, k, s)
			}
			if p, ok := slotOf[k]; ok && p != s {
				t.Fatalf("n %d: key %d in slots %d and %d", tc.n, k, p, s)
			}
			slotOf[k] = s
		}
		for i, k := range probe {
			want, ok := slotOf[k]
			if !ok {
				want = -1
			}
			if found[i] != want {
				t.Fatalf("n %d: find(%d) = %d, want %d", tc.n, k, found[i], want)
			}
		}
		// The Go table used on the CPU follows the same probe sequence.
		hs, hslot := hostInsert(keys, tc.cap, tc.empty)
		hf := hostFind(probe, hs, tc.empty)
		for i := range keys {
			if hs[hslot[i]] != keys[i] {
				t.Fatalf("n %d: hostInsert put key %d at slot %d", tc.n, keys[i], hslot[i])
			}
			if (hf[i] < 0) != (found[i] < 0) || (hf[i] >= 0 && hs[hf[i]] != probe[i]) {
				t.Fatalf("n %d: hostFind(%d) = %d, the kernel %d", tc.n, probe[i], hf[i], found[i])
			}
		}
	}
}

// testGroupKernels checks the shared-memory sums, counts, first rows,
// maxima and minima per group against float64 and integer references,
// with and without a mask of present rows.
func testGroupKernels(t *testing.T, bin string) {
	r := rand.New(rand.NewPCG(5, 6))
	for i, dt := range []array.DType{array.Int32, array.Int64, array.Float32, array.Float64} {
		// Group keys of int32 from lo, or int64 group numbers.
		key, lo := array.Int64, int64(0)
		if i%2 == 0 {
			key, lo = array.Int32, -1_000_000
		}
		variant := hostVariant{dt, key}.name()
		for _, tc := range []struct{ n, g, grid, block int }{{1000, 7, 3, 64}, {777, 100, 2, 96}, {50, 300, 1, 32}} {
			for _, masked := range []bool{false, true} {
				name := fmt.Sprintf("%v/n%d/g%d/mask%v", dt, tc.n, tc.g, masked)
				id := make([]int64, tc.n)
				x := make([]float64, tc.n)
				ok := make([]byte, tc.n)
				for i := range id {
					id[i] = int64(r.IntN(tc.g))
					if i%4 == 0 {
						id[i] = int64(r.IntN(min(tc.g, 3))) // heavy groups
					}
					switch dt {
					case array.Float32, array.Float64:
						x[i] = (r.Float64() - 0.5) * 1e3
						if dt == array.Float32 {
							x[i] = float64(float32(x[i]))
						}
					case array.Int32:
						x[i] = float64(r.IntN(2_000_001) - 1_000_000)
					default:
						x[i] = float64(r.IntN(1<<40) - 1<<39)
					}
					ok[i] = 1
					if masked && r.IntN(3) == 0 {
						ok[i] = 0
					}
				}
				var buf bytes.Buffer
				for _, j := range id {
					if key == array.Int32 {
						binary.Write(&buf, binary.LittleEndian, int32(j+lo))
					} else {
						binary.Write(&buf, binary.LittleEndian, j+lo)
					}
				}
				low, high := writeVals(&buf, dt, x)
				binary.Write(&buf, binary.LittleEndian, ok)
				binary.Write(&buf, binary.LittleEndian, int32(b2i(masked)))
				buf.Write(low)
				buf.Write(high)
				out := runHashHost(t, bin, buf.Bytes(), variant, "group", tc.n, tc.g, tc.grid, tc.block, lo)
				var sum []float64
				if dt.IsFloating() {
					sum = readN[float64](t, out, tc.g)
				} else {
					for _, v := range readN[int64](t, out, tc.g) {
						sum = append(sum, float64(v))
					}
				}
				cnt := readN[int64](t, out, tc.g)
				first := readN[int64](t, out, tc.g)
				mx, mn := readVals(t, out, dt, tc.g), readVals(t, out, dt, tc.g)
				wsum, wcnt := make([]float64, tc.g), make([]int64, tc.g)
				wfirst := make([]int64, tc.g)
				wmx, wmn := make([]float64, tc.g), make([]float64, tc.g)
				for j := range wfirst {
					wfirst[j], wmx[j], wmn[j] = int64(tc.n), math.Inf(-1), math.Inf(1)
				}
				for i, j := range id {
					wfirst[j] = min(wfirst[j], int64(i))
					if ok[i] == 0 {
						continue
					}
					wsum[j] += x[i]
					wcnt[j]++
					wmx[j], wmn[j] = max(wmx[j], x[i]), min(wmn[j], x[i])
				}
				for j := 0; j < tc.g; j++ {
					if math.Abs(sum[j]-wsum[j]) > 1e-9*(1+math.Abs(wsum[j])) {
						t.Errorf("%s: sum[%d] = %v, want %v", name, j, sum[j], wsum[j])
					}
					if cnt[j] != wcnt[j] || first[j] != wfirst[j] {
						t.Errorf("%s: count, first [%d] = %d, %d, want %d, %d", name, j, cnt[j], first[j], wcnt[j], wfirst[j])
					}
					if wcnt[j] > 0 && (mx[j] != wmx[j] || mn[j] != wmn[j]) {
						t.Errorf("%s: max, min [%d] = %v, %v, want %v, %v", name, j, mx[j], mn[j], wmx[j], wmn[j])
					}
				}
			}
		}
	}
}

// writeVals writes x as dt and returns dt's lowest and highest values,
// encoded.
func writeVals(w *bytes.Buffer, dt array.DType, x []float64) (lo, hi []byte) {
	var l, h bytes.Buffer
	switch dt {
	case array.Int32:
		for _, v := range x {
			binary.Write(w, binary.LittleEndian, int32(v))
		}
		binary.Write(&l, binary.LittleEndian, int32(math.MinInt32))
		binary.Write(&h, binary.LittleEndian, int32(math.MaxInt32))
	case array.Int64:
		for _, v := range x {
			binary.Write(w, binary.LittleEndian, int64(v))
		}
		binary.Write(&l, binary.LittleEndian, int64(math.MinInt64))
		binary.Write(&h, binary.LittleEndian, int64(math.MaxInt64))
	case array.Float32:
		for _, v := range x {
			binary.Write(w, binary.LittleEndian, float32(v))
		}
		binary.Write(&l, binary.LittleEndian, float32(math.Inf(-1)))
		binary.Write(&h, binary.LittleEndian, float32(math.Inf(1)))
	default:
		binary.Write(w, binary.LittleEndian, x)
		binary.Write(&l, binary.LittleEndian, math.Inf(-1))
		binary.Write(&h, binary.LittleEndian, math.Inf(1))
	}
	return l.Bytes(), h.Bytes()
}

func readVals(t *testing.T, r *bytes.Reader, dt array.DType, n int) []float64 {
	t.Helper()
	v := make([]float64, n)
	switch dt {
	case array.Int32:
		for i, x := range readN[int32](t, r, n) {
			v[i] = float64(x)
		}
	case array.Int64:
		for i, x := range readN[int64](t, r, n) {
			v[i] = float64(x)
		}
	case array.Float32:
		for i, x := range readN[float32](t, r, n) {
			v[i] = float64(x)
		}
	default:
		return readN[float64](t, r, n)
	}
	return v
}
