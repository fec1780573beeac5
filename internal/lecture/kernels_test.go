package lecture_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// grayRef is the reference grayscale of planar rgb in float64, and whether
// each value is within 1e-4 of an integer, where float32 rounding may
// truncate to the integer below.
func grayRef(rgb []uint8, n int) (ref []uint8, edge []bool) {
	ref, edge = make([]uint8, n), make([]bool, n)
	for i := range n {
		v := 0.2989*float64(rgb[i]) + 0.5870*float64(rgb[i+n]) + 0.1140*float64(rgb[i+2*n])
		ref[i] = uint8(v)
		edge[i] = v-math.Floor(v) < 1e-4 || math.Ceil(v)-v < 1e-4
	}
	return ref, edge
}

func checkGray(t *testing.T, got, ref []uint8, edge []bool) {
	t.Helper()
	bad := 0
	for i := range ref {
		d := int(got[i]) - int(ref[i])
		if d != 0 && !(edge[i] && (d == 1 || d == -1)) {
			if bad++; bad <= 5 {
				t.Errorf("gray[%d] = %d, want %d", i, got[i], ref[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d pixels wrong", bad, len(ref))
	}
}

// poisonBytes fills out with values that differ from ref everywhere, so an
// unwritten pixel fails.
func poisonBytes(out, ref []uint8) {
	for i := range out {
		out[i] = ref[i] + 128
	}
}

func TestGray(t *testing.T) {
	r := newRand(t)
	for _, size := range [][2]int{{1, 1}, {31, 17}, {480, 640}} {
		w, h := size[0], size[1]
		n := w * h
		rgb := randBytes(r, 3*n)
		ref, edge := grayRef(rgb, n)

		gray := make([]uint8, n)
		poisonBytes(gray, ref)
		cfg := sim.Config{Grid: kernel.Dim3{X: cdiv(n, 256)}, Block: kernel.Dim3{X: 256}}
		if err := sim.Run(cfg, lecture.Gray, rgb, gray, int32(n)); err != nil {
			t.Fatal(err)
		}
		checkGray(t, gray, ref, edge)

		poisonBytes(gray, ref)
		cfg = sim.Config{Grid: dim(cdiv(w, 16), cdiv(h, 16)), Block: dim(16, 16)}
		if err := sim.Run(cfg, lecture.Gray2D, rgb, gray, int32(w), int32(h)); err != nil {
			t.Fatal(err)
		}
		checkGray(t, gray, ref, edge)

		poisonBytes(gray, ref)
		cfg = sim.Config{Grid: kernel.Dim3{X: cdiv(n, 128)}, Block: kernel.Dim3{X: 128}, Checked: true}
		k := sim.Kernel{Name: "Gray", Args: []any{rgb, gray, int32(n)},
			Func:    func(t *kernel.Thread) { lecture.Gray(t, rgb, gray, int32(n)) },
			Checked: func(t *kernel.Thread) { grayChecked(t, rgb, gray, int32(n)) }}
		if err := sim.Launch(cfg, k); err != nil {
			t.Fatal(err)
		}
		checkGray(t, gray, ref, edge)
	}
}

// matmulRef returns a b in float64 and, per element, the sum of the
// magnitudes of its terms, which bounds the rounding error of a float32
// dot product.
func matmulRef(a, b []float32, m, n, k int) (ref, mag []float64) {
	ref, mag = make([]float64, m*n), make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, g float64
			for p := range k {
				v := float64(a[i*k+p]) * float64(b[p*n+j])
				s += v
				g += math.Abs(v)
			}
			ref[i*n+j], mag[i*n+j] = s, g
		}
	}
	return ref, mag
}

func checkMatMul(t *testing.T, c []float32, ref, mag []float64, k int) {
	t.Helper()
	tol := 2 * float64(k) * 0x1p-24 // worst case of a float32 dot product of k terms
	bad := 0
	for i := range ref {
		if !relClose(c[i], ref[i], mag[i], tol) {
			if bad++; bad <= 5 {
				t.Errorf("c[%d] = %v, want %v", i, c[i], ref[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, len(ref))
	}
}

func TestMatMul(t *testing.T) {
	r := newRand(t)
	for _, s := range [][3]int{{1, 1, 1}, {16, 16, 16}, {37, 53, 29}, {64, 48, 100}} {
		m, n, k := s[0], s[1], s[2]
		t.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(t *testing.T) {
			a, b := randFloats(r, m*k), randFloats(r, k*n)
			ref, mag := matmulRef(a, b, m, n, k)
			grid := dim(cdiv(n, 16), cdiv(m, 16))
			args := []any{a, b, nil, int32(m), int32(n), int32(k)}
			run := func(cfg sim.Config, fn, twin func(*kernel.Thread, []float32, []float32, []float32, int32, int32, int32), name string) {
				t.Helper()
				c := nanFilled(m * n)
				args[2] = c
				kern := sim.Kernel{Name: name, Args: args,
					Func: func(th *kernel.Thread) { fn(th, a, b, c, int32(m), int32(n), int32(k)) }}
				if twin != nil {
					kern.Checked = func(th *kernel.Thread) { twin(th, a, b, c, int32(m), int32(n), int32(k)) }
				}
				if err := sim.Launch(cfg, kern); err != nil {
					t.Fatal(err)
				}
				checkMatMul(t, c, ref, mag, k)
			}
			run(sim.Config{Grid: grid, Block: dim(16, 16)}, lecture.MatMul, nil, "MatMul")
			run(sim.Config{Grid: grid, Block: dim(16, 16)}, lecture.TiledMatMul, nil, "TiledMatMul")
			run(sim.Config{Grid: grid, Block: dim(16, 16), Checked: true}, lecture.TiledMatMul, tiledMatMulChecked, "TiledMatMul")
			for _, w := range []int{8, 16, 32} {
				cfg := sim.Config{Grid: dim(cdiv(n, w), cdiv(m, w)), Block: dim(int32(w), int32(w)), DynamicSharedBytes: 2 * w * w * 4}
				run(cfg, lecture.TiledMatMulDynamic, nil, "TiledMatMulDynamic")
			}
		})
	}
}

func TestSum(t *testing.T) {
	r := newRand(t)
	for _, n := range []int{1, 1000, 100003} {
		x := randFloats(r, n)
		var ref, mag float64
		for _, v := range x {
			ref += float64(v)
			mag += math.Abs(float64(v))
		}
		for _, checked := range []bool{false, true} {
			blocks := 40
			partial := nanFilled(blocks)
			k := sim.Kernel{Name: "Sum", Args: []any{x, partial, int32(n)},
				Func:    func(t *kernel.Thread) { lecture.Sum(t, x, partial, int32(n)) },
				Checked: func(t *kernel.Thread) { sumChecked(t, x, partial, int32(n)) }}
			if err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: int32(blocks)}, Block: kernel.Dim3{X: 256}, Checked: checked}, k); err != nil {
				t.Fatal(err)
			}
			total := nanFilled(1)
			if err := sim.Run(sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 64}}, lecture.Sum, partial, total, int32(blocks)); err != nil {
				t.Fatal(err)
			}
			if !relClose(total[0], ref, mag, 1e-5) {
				t.Errorf("n=%d checked=%v: sum = %v, want %v", n, checked, total[0], ref)
			}
		}
	}
}

func TestHistogram(t *testing.T) {
	r := newRand(t)
	for _, n := range []int{1, 777, 200000} {
		data := make([]uint8, n)
		for i := range data {
			data[i] = uint8(r.NormFloat64()*40 + 128) // skewed, so bins contend
		}
		// hist accumulates: start from random counts, not zeros.
		start := make([]uint32, lecture.Bins)
		for i := range start {
			start[i] = r.Uint32N(1000)
		}
		want := append([]uint32(nil), start...)
		for _, v := range data {
			want[v]++
		}
		for _, checked := range []bool{false, true} {
			hist := append([]uint32(nil), start...)
			k := sim.Kernel{Name: "Histogram", Args: []any{data, hist, int32(n)},
				Func:    func(t *kernel.Thread) { lecture.Histogram(t, data, hist, int32(n)) },
				Checked: func(t *kernel.Thread) { histogramChecked(t, data, hist, int32(n)) }}
			if err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: 13}, Block: kernel.Dim3{X: 96}, Checked: checked}, k); err != nil {
				t.Fatal(err)
			}
			for b := range want {
				if hist[b] != want[b] {
					t.Fatalf("n=%d checked=%v: hist[%d] = %d, want %d", n, checked, b, hist[b], want[b])
				}
			}
		}
	}
}

// scan computes the exclusive prefix sums of x on the simulator: one pass
// of ScanBlocks, then, with more than one segment, the scan of the segment
// totals (recursively) added back by ScanAdd.
func scan(x []int32) ([]int32, error) {
	n := len(x)
	seg := 2 * lecture.ScanThreads
	nb := max(1, (n+seg-1)/seg)
	y := make([]int32, n)
	for i := range y {
		y[i] = math.MinInt32 // poison
	}
	sums := make([]int32, nb)
	cfg := sim.Config{Grid: kernel.Dim3{X: int32(nb)}, Block: kernel.Dim3{X: lecture.ScanThreads}}
	if err := sim.Run(cfg, lecture.ScanBlocks, x, y, sums, int32(n)); err != nil {
		return nil, err
	}
	if nb == 1 {
		return y, nil
	}
	offsets, err := scan(sums)
	if err != nil {
		return nil, err
	}
	cfg = sim.Config{Grid: kernel.Dim3{X: cdiv(n, 256)}, Block: kernel.Dim3{X: 256}}
	return y, sim.Run(cfg, lecture.ScanAdd, y, offsets, int32(n))
}

func TestScan(t *testing.T) {
	r := newRand(t)
	for _, n := range []int{1, 511, 512, 513, 100000, 300001} {
		x := make([]int32, n)
		for i := range x {
			x[i] = int32(r.IntN(2001)) - 1000
		}
		y, err := scan(x)
		if err != nil {
			t.Fatal(err)
		}
		var acc int32
		for i := range x {
			if y[i] != acc {
				t.Fatalf("n=%d: y[%d] = %d, want %d", n, i, y[i], acc)
			}
			acc += x[i]
		}
	}
}
