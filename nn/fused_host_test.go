package nn_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/clangtest"
	"github.com/gocu-dev/gocu/nn"
)

// The fused kernels' CUDA C compiled as host C++ with clang++-16 and run
// with a thread per CUDA thread: a block's threads run together, with
// barriers for __syncthreads and the warp shuffles, so that the kernels'
// logic is checked against the float64 references without a GPU.

const hostPrelude = `#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
#include <unistd.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)
struct gocu_dim3 { unsigned x = 0, y = 1, z = 1; };
static thread_local gocu_dim3 threadIdx;
static gocu_dim3 blockIdx, blockDim, gridDim;
static std::barrier<>* gocu_block;
static std::barrier<>* gocu_warp[32];
static float gocu_shfl[32][32];
static std::mutex gocu_atomic;
static std::vector<float> gocu_smem;
static void __syncthreads() { gocu_block->arrive_and_wait(); }
static void __syncwarp(unsigned = 0xffffffffu) { gocu_warp[threadIdx.x >> 5]->arrive_and_wait(); }
static float __shfl_xor_sync(unsigned, float v, int o, int) {
    int l = threadIdx.x & 31, w = threadIdx.x >> 5;
    gocu_shfl[w][l] = v;
    gocu_warp[w]->arrive_and_wait();
    float r = gocu_shfl[w][l ^ o];
    gocu_warp[w]->arrive_and_wait();
    return r;
}
static float atomicAdd(float* p, float v) {
    std::lock_guard<std::mutex> g(gocu_atomic);
    float old = *p;
    *p = old + v;
    return old;
}
static float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
static unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
`

const hostMain = `
template <class F> static void launch(unsigned grid, unsigned block, size_t smem, F f) {
    gridDim.x = grid;
    blockDim.x = block;
    gocu_smem.assign(smem / 4, __uint_as_float(0x7fc00000u)); // poisoned
    for (unsigned b = 0; b < grid; b++) {
        blockIdx.x = b;
        std::barrier<> bar(block);
        gocu_block = &bar;
        std::vector<std::barrier<>*> warps;
        for (unsigned w = 0; w < block / 32; w++) gocu_warp[w] = new std::barrier<>(32);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < block; t++) ts.emplace_back([t, &f] { threadIdx.x = t; f(); });
        for (auto& t : ts) t.join();
        for (unsigned w = 0; w < block / 32; w++) delete gocu_warp[w];
    }
}

template <class T> static std::vector<T> in(size_t n) {
    std::vector<T> v(n);
    if (fread(v.data(), sizeof(T), n, stdin) != n) { fprintf(stderr, "short input\n"); _exit(2); }
    return v;
}

template <class T> static void out(const std::vector<T>& v) { fwrite(v.data(), sizeof(T), v.size(), stdout); }

static std::vector<TI> tiNaN(size_t n) { std::vector<TI> v(n); memset(v.data(), 0xff, n * sizeof(TI)); return v; }
static std::vector<TO> toNaN(size_t n) { std::vector<TO> v(n); memset(v.data(), 0xff, n * sizeof(TO)); return v; }
static std::vector<float> fNaN(size_t n) { return std::vector<float>(n, __uint_as_float(0x7fc00000u)); }

int main(int argc, char** argv) {
    std::string op = argv[1];
    long long n = atoll(argv[2]);
    int c = atoi(argv[3]);
    if (op == "ln" || op == "rms") {
        int rms = op == "rms";
        auto x = in<TI>(n * c); auto w = in<float>(c); auto b = in<float>(c); auto dy = in<TO>(n * c);
        auto y = toNaN(n * c); auto mean = fNaN(n), rstd = fNaN(n);
        launch((n + 7) / 8, 256, 0, [&] { gocu_ln_fwd(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), n, c, 1e-5f, rms); });
        // With sums, the backward kernel's 3 blocks of 4 warps sum the
        // weight's and bias's gradients themselves; else gocu_ln_dwdb does.
        int sums = atoi(argv[4]);
        int blocks = std::min<long long>((n + 7) / 8, 3), chunks = 2, tiles = (c + 31) / 32;
        auto dx = tiNaN(n * c); auto dw = fNaN(c), db = fNaN(c);
        if (sums) {
            auto part = fNaN(3 * 2 * c);
            launch(3, 128, 4 * 2048 * 4, [&] { gocu_ln_bwd(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), dx.data(), part.data(), n, c, rms); });
            launch((2 * c + 31) / 32, 256, 0, [&] { gocu_ln_wsum(part.data(), dw.data(), db.data(), 3, c); });
        } else {
            auto part = fNaN(chunks * 2 * c);
            launch(blocks, 256, 0, [&] { gocu_ln_bwd(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), dx.data(), nullptr, n, c, rms); });
            launch(tiles * chunks, 256, 0, [&] { gocu_ln_dwdb(dy.data(), x.data(), mean.data(), rstd.data(), part.data(), n, c, chunks); });
            launch((2 * c + 31) / 32, 256, 0, [&] { gocu_ln_wsum(part.data(), dw.data(), db.data(), chunks, c); });
        }
        out(y); out(dx); out(dw); out(db);
    } else if (op == "gelu") {
        int form = c;
        auto x = in<TI>(n); auto dy = in<TO>(n);
        auto y = toNaN(n); auto dx = tiNaN(n);
        launch(3, 256, 0, [&] { gocu_gelu_fwd(x.data(), y.data(), n, form); });
        launch(3, 256, 0, [&] { gocu_gelu_bwd(x.data(), dy.data(), dx.data(), n, form); });
        out(y); out(dx);
    } else if (op == "bgelu") {
        int form = atoi(argv[4]), per = 4, blocks = (n + per - 1) / per;
        auto x = in<TI>(n * c); auto b = in<float>(c); auto dy = in<TO>(n * c);
        auto y = toNaN(n * c); auto dx = tiNaN(n * c); auto part = fNaN(blocks * c); auto db = fNaN(c);
        launch(3, 256, 0, [&] { gocu_bias_gelu_fwd(x.data(), b.data(), y.data(), n * c, c, form); });
        launch(blocks, 64, 0, [&] { gocu_bias_gelu_bwd(x.data(), b.data(), dy.data(), dx.data(), part.data(), n, c, per, form); });
        launch((c + 31) / 32, 256, 0, [&] { gocu_colsum(part.data(), db.data(), blocks, c); });
        out(y); out(dx); out(db);
    } else if (op == "xent") {
        int block = atoi(argv[4]);
        auto x = in<TI>(n * c); auto lab = in<long long>(n); auto g = in<float>(1);
        auto loss = fNaN(n), lse = fNaN(n); auto dx = tiNaN(n * c);
        launch(n, block, 0, [&] { gocu_xent_fwd(x.data(), lab.data(), loss.data(), lse.data(), c); });
        launch(2, block, 0, [&] { gocu_xent_bwd(x.data(), lab.data(), lse.data(), g.data(), 1.0f / n, dx.data(), c, n, 0); });
        out(loss); out(dx);
    } else if (op == "xentfused") {
        // The fused pass, then the backward pass with keep1: it leaves dx
        // alone for g = 1 and recomputes it for any other g.
        // With cache, the row waits in the (poisoned) shared memory.
        int block = atoi(argv[4]), cache = atoi(argv[5]);
        auto x = in<TI>(n * c); auto lab = in<long long>(n); auto g = in<float>(1);
        auto loss = fNaN(n), lse = fNaN(n); auto dx = tiNaN(n * c);
        launch(n, block, cache ? c * sizeof(TI) : 0, [&] { gocu_xent_fused(x.data(), lab.data(), loss.data(), lse.data(), 1.0f / n, dx.data(), c, cache); });
        launch(2, block, 0, [&] { gocu_xent_bwd(x.data(), lab.data(), lse.data(), g.data(), 1.0f / n, dx.data(), c, n, 1); });
        out(loss); out(dx);
    }
    return 0;
}
`

// hostBinary compiles the fused kernels for dtypes in and out as a host
// program.
func hostBinary(t *testing.T, clang string, in, out array.DType) string {
	t.Helper()
	src := nn.FusedSource(in, out)
	// The dynamic shared memory is the launch's buffer.
	src = strings.Replace(src, "extern __shared__ Vec xentRow[];", "Vec* xentRow = (Vec*)gocu_smem.data();", 1)
	src = strings.Replace(src, "extern __shared__ float lnAcc[];", "float* lnAcc = gocu_smem.data();", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "fused.cc")
	if err := os.WriteFile(path, []byte(hostPrelude+src+hostMain), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fused")
	msg, err := exec.Command(clang, "-std=c++20", "-O1", "-pthread", "-w", "-o", bin, path).CombinedOutput()
	if err != nil {
		t.Fatalf("%v→%v: clang++: %v\n%s", in, out, err, msg)
	}
	return bin
}

// enc writes v as dt (float32 or bfloat16, rounded as array rounds) and
// returns the values dt holds.
func enc(t *testing.T, w *bytes.Buffer, v []float64, dt array.DType) []float64 {
	t.Helper()
	a := array.FromSliceOn(array.CPU().Device(), v).AsType(dt)
	held := f64(t, a)
	for _, x := range held {
		f := float32(x)
		if dt == array.BFloat16 {
			binary.Write(w, binary.LittleEndian, uint16(math.Float32bits(f)>>16))
		} else {
			binary.Write(w, binary.LittleEndian, f)
		}
	}
	return held
}

// dec reads n values of dt from r.
func dec(t *testing.T, r *bytes.Reader, n int, dt array.DType) []float64 {
	t.Helper()
	v := make([]float64, n)
	for i := range v {
		if dt == array.BFloat16 {
			var u uint16
			if err := binary.Read(r, binary.LittleEndian, &u); err != nil {
				t.Fatal(err)
			}
			v[i] = float64(math.Float32frombits(uint32(u) << 16))
		} else {
			var f float32
			if err := binary.Read(r, binary.LittleEndian, &f); err != nil {
				t.Fatal(err)
			}
			v[i] = float64(f)
		}
	}
	return v
}

func runHost(t *testing.T, bin string, in []byte, args ...any) *bytes.Reader {
	t.Helper()
	var s []string
	for _, a := range args {
		s = append(s, fmt.Sprint(a))
	}
	cmd := exec.Command(bin, s...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	o, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, s, err, stderr.String())
	}
	return bytes.NewReader(o)
}

func TestFusedKernelsRunOnHost(t *testing.T) {
	clang := clangtest.Need(t, "clang++-16")
	dts := []array.DType{array.Float32, array.BFloat16}
	for _, in := range dts {
		for _, out := range dts {
			t.Run(fmt.Sprintf("%v-%v", in, out), func(t *testing.T) {
				t.Parallel()
				hostRun(t, clang, in, out)
			})
		}
	}
}

// hostRun checks the kernels for dtypes in and out on the host.
func hostRun(t *testing.T, clang string, in, out array.DType) {
	bin := hostBinary(t, clang, in, out)
	tol := tolFor(in, out)
	// LayerNorm and RMSNorm: rows of 100 (not a multiple of the warp,
	// nor of 8: scalar accesses), 64 (16-byte ones, kept in registers
	// backward) and 1040 (16-byte ones, read twice); 37 rows over 5
	// forward blocks and 3 backward ones.
	for _, op := range []string{"ln 0", "rms 0", "ln 1", "rms 1"} {
		for _, c := range []int{100, 64, 1040} {
			name, sums, _ := strings.Cut(op, " ")
			if sums == "1" && c > 1024 {
				continue // the kernel sums rows of at most 1024
			}
			const n = 37
			var w bytes.Buffer
			x := enc(t, &w, scaled(randn(uint64(c), n*c), 2, 0.5), in)
			wt := enc(t, &w, scaled(randn(uint64(c)+1, c), 1, 1), array.Float32)
			bv := randn(uint64(c)+2, c)
			if name == "rms" {
				clear(bv)
			}
			b := enc(t, &w, bv, array.Float32)
			gy := enc(t, &w, randn(uint64(c)+3, n*c), out)
			r := runHost(t, bin, w.Bytes(), name, n, c, sums)
			wy, wdx, wdw, wdb := normRef(x, wt, b, gy, n, c, name == "rms", 1e-5)
			what := fmt.Sprintf("%s %v→%v c=%d", op, in, out, c)
			near(t, what+" y", dec(t, r, n*c, out), wy, tol)
			near(t, what+" dx", dec(t, r, n*c, in), wdx, tol)
			near(t, what+" dweight", dec(t, r, c, array.Float32), wdw, 1e-4)
			near(t, what+" dbias", dec(t, r, c, array.Float32), wdb, 1e-4)
		}
	}
	for _, form := range []int{0, 1} {
		const n = 1000 // 3 blocks of 256 stride over it
		var w bytes.Buffer
		x := enc(t, &w, scaled(randn(uint64(form)+5, n), 3, 0), in)
		gy := enc(t, &w, randn(uint64(form)+6, n), out)
		r := runHost(t, bin, w.Bytes(), "gelu", n, form)
		wy, wdx := geluRef(x, gy, form == 1)
		what := fmt.Sprintf("gelu %v→%v tanh=%d", in, out, form)
		near(t, what+" y", dec(t, r, n, out), wy, tol)
		near(t, what+" dx", dec(t, r, n, in), wdx, tol)
	}
	// Bias and GELU: 37 rows of 100 (scalar accesses) or 1024 (8 columns
	// a thread) in 10 blocks of 4 rows, a block of 64 threads looping over
	// the columns.
	for _, fc := range [][2]int{{0, 100}, {1, 100}, {0, 1024}, {1, 1024}} {
		form, c := fc[0], fc[1]
		const n = 37
		var w bytes.Buffer
		x := enc(t, &w, scaled(randn(uint64(form)+15, n*c), 3, 0), in)
		b := enc(t, &w, randn(uint64(form)+16, c), array.Float32)
		gy := enc(t, &w, randn(uint64(form)+17, n*c), out)
		r := runHost(t, bin, w.Bytes(), "bgelu", n, c, form)
		xb := make([]float64, n*c)
		for i := range xb {
			xb[i] = x[i] + b[i%c]
		}
		wy, wdx := geluRef(xb, gy, form == 1)
		wdb := make([]float64, c)
		for i, v := range wdx {
			wdb[i%c] += v
		}
		what := fmt.Sprintf("bias gelu %v→%v tanh=%d c=%d", in, out, form, c)
		near(t, what+" y", dec(t, r, n*c, out), wy, tol)
		near(t, what+" dx", dec(t, r, n*c, in), wdx, tol)
		near(t, what+" dbias", dec(t, r, c, array.Float32), wdb, 1e-4)
	}
	if out != array.Float32 {
		return // the classifier's module has float32 outputs
	}
	// The classifier: rows of 50 and 300 (scalar loads for bfloat16),
	// 1000 and 5000 (16-byte vectors); the two-pass form and the fused
	// one, with the row waiting in shared memory or not, whose gradient
	// for g = 1 is kept and for g = 2.5 recomputed.
	for _, cb := range [][2]int{{50, 64}, {300, 32}, {1000, 256}, {5000, 1024}} {
		c, block := cb[0], cb[1]
		const n = 5
		x := scaled(randn(uint64(c)+7, n*c), 4, 0)
		lab := []int64{0, int64(c - 1), 3, int64(c / 2), 7}
		grads := map[string][]float64{}
		for _, op := range []string{"xent", "xentfused 0", "xentfused 1"} {
			for _, g := range []float64{1, 2.5} {
				var w bytes.Buffer
				x := enc(t, &w, x, in)
				binary.Write(&w, binary.LittleEndian, lab)
				binary.Write(&w, binary.LittleEndian, float32(g))
				name, cache, _ := strings.Cut(op, " ")
				r := runHost(t, bin, w.Bytes(), name, n, c, block, cache)
				wl, wdx := xentRef(x, lab, n, c, g)
				rows := dec(t, r, n, array.Float32)
				mean := 0.0
				for _, v := range rows {
					mean += v / n
				}
				what := fmt.Sprintf("%s %v c=%d g=%v", op, in, c, g)
				near(t, what+" loss", []float64{mean}, []float64{wl}, 1e-5)
				got := dec(t, r, n*c, in)
				grads[fmt.Sprint(op, g)] = slices.Clone(got)
				for i := range got {
					got[i] *= n
					wdx[i] *= n
				}
				near(t, what+" dx", got, wdx, tol/4)
			}
		}
		// The same bits whichever pass wrote the gradient.
		for _, g := range []float64{1, 2.5} {
			a := grads[fmt.Sprint("xent", g)]
			for _, op := range []string{"xentfused 0", "xentfused 1"} {
				b := grads[fmt.Sprint(op, g)]
				for i := range a {
					if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
						t.Fatalf("%s %v c=%d g=%v: dx[%d] is %v from the fused pass, %v from the backward pass", op, in, c, g, i, b[i], a[i])
					}
				}
			}
		}
	}
	// Labels outside [0, c) make their rows NaN, and only those.
	const n, c = 3, 40
	var w bytes.Buffer
	enc(t, &w, randn(9, n*c), in)
	binary.Write(&w, binary.LittleEndian, []int64{-1, 5, c})
	binary.Write(&w, binary.LittleEndian, float32(1))
	for _, op := range []string{"xent", "xentfused"} {
		r := runHost(t, bin, w.Bytes(), op, n, c, 64, 1)
		rows := dec(t, r, n, array.Float32)
		dx := dec(t, r, n*c, in)
		for i := range n {
			for j := range c {
				if math.IsNaN(dx[i*c+j]) != (i != 1) {
					t.Fatalf("%s bad labels: dx[%d, %d] = %v", op, i, j, dx[i*c+j])
				}
			}
			if math.IsNaN(rows[i]) != (i != 1) {
				t.Fatalf("%s bad labels: loss of row %d = %v", op, i, rows[i])
			}
		}
	}
}

// scaled returns v·s + o.
func scaled(v []float64, s, o float64) []float64 {
	for i := range v {
		v[i] = v[i]*s + o
	}
	return v
}
