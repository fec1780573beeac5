package array

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// refMatMul multiplies broadcast stacks of matrices in float64 and returns
// the result and the magnitude sum(|a||b|) per element for the tolerance.
func refMatMul(a, b host) ([]int, []float64, []float64) {
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int{bs[0], 1}
	}
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	batch, _ := broadcastShapes("", as[:len(as)-2], bs[:len(bs)-2])
	A := broadcastHost(host{as, a.v}, append(append([]int{}, batch...), m, k))
	B := broadcastHost(host{bs, b.v}, append(append([]int{}, batch...), k, n))
	nb := backend.Size(batch)
	out := make([]float64, nb*m*n)
	mag := make([]float64, nb*m*n)
	for t := 0; t < nb; t++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s, g := 0.0, 0.0
				for p := 0; p < k; p++ {
					x, y := A[t*m*k+i*k+p], B[t*k*n+p*n+j]
					s += x * y
					g += math.Abs(x * y)
				}
				out[t*m*n+i*n+j] = s
				mag[t*m*n+i*n+j] = g
			}
		}
	}
	shape := append([]int{}, batch...)
	if len(a.shape) > 1 {
		shape = append(shape, m)
	}
	if len(b.shape) > 1 {
		shape = append(shape, n)
	}
	return shape, out, mag
}

var matmulShapes = [][2][]int{
	{{3, 4}, {4, 5}}, {{1, 1}, {1, 1}}, {{4}, {4, 3}}, {{3, 4}, {4}}, {{5}, {5}},
	{{2, 3, 4}, {4, 2}}, {{3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{0, 3}, {3, 4}},
	{{3, 0}, {0, 4}}, {{2, 3}, {3, 0}}, {{37, 65}, {65, 29}}, {{130, 70}, {70, 150}},
	{{2, 2, 1, 2, 3, 4}, {2, 1, 4, 2}}, {{4}, {2, 4, 3}}, {{2, 3, 4}, {4}}, {{1, 5}, {5, 1}},
}

func TestMatMul(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for ci, p := range matmulShapes {
			for _, dt := range allDTypes {
				ha := randHost(r, dt, p[0], -2, 2)
				hb := randHost(r, dt, p[1], -2, 2)
				for _, kinds := range [][2]layoutKind{{contiguous, contiguous}, {transposed, transposed}, {stepped, reversed}, {layoutKinds[ci%4], layoutKinds[(ci+1)%4]}} {
					a := makeArray(t, d, dt, ha, kinds[0])
					b := makeArray(t, d, dt, hb, kinds[1])
					c := a.MatMul(b)
					what := fmt.Sprintf("MatMul(%v%v %v, %v%v %v)", dt, p[0], kinds[0], dt, p[1], kinds[1])
					if c.DType() != dt {
						t.Fatalf("%s: dtype %v (%v)", what, c.DType(), c.Err())
					}
					shape, want, mag := refMatMul(ha, hb)
					got := readHost(t, c)
					if !sameShape(got.shape, shape) {
						t.Fatalf("%s: shape %v, want %v", what, got.shape, shape)
					}
					for i := range want {
						w := want[i]
						if !dt.IsFloat() {
							if dt == Bool {
								w = b2f(w != 0)
							} else {
								w = wrapInt(dt, w)
							}
						}
						tol := matmulTol.of(dt) * math.Max(mag[i], 1)
						if math.Abs(got.v[i]-w) > tol || math.IsNaN(got.v[i]) {
							t.Fatalf("%s: element %d = %v, want %v", what, i, got.v[i], w)
						}
					}
				}
			}
		}
		// Mixed dtypes promote.
		x := d.Ones(Int32, 2, 3)
		y := d.Ones(Float32, 3, 2)
		if z := x.MatMul(y); z.DType() != Float64 {
			t.Errorf("int32 @ float32 = %v", z.DType())
		} else {
			checkHost(t, "mixed", readHost(t, z), []int{2, 2}, []float64{3, 3, 3, 3}, 0)
		}
	})
}

// A transposed operand is passed as a transpose flag, not copied: the
// backend sees the original buffer with swapped strides.
func TestMatMulTransposeWithoutCopy(t *testing.T) {
	rec := &recordingBackend{Backend: CPU().be}
	d := &Maker{be: rec}
	w := d.NewRNG(1).Uniform(Float32, -1, 1, 64, 32)
	x := d.NewRNG(2).Uniform(Float32, -1, 1, 16, 64)
	ws, _ := w.use("")
	rec.reset()
	y := x.MatMul(w.T().T()) // a transposed view of a transposed view
	z := x.T().T().MatMul(w)
	yt := w.T().MatMul(x.T()) // (32,64)@(64,16)
	for _, a := range []*Array{y, z, yt} {
		if err := a.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if rec.evals != 0 {
		t.Errorf("MatMul of transposed views copied (%d evaluations)", rec.evals)
	}
	last := rec.lastMatMul
	if last.A.Buf != ws.st.buf || !last.A.Trans() || last.A.LD() != 32 {
		t.Errorf("w.T() was not passed as a transposed operand: %+v", last.A)
	}
	a, _ := yt.Float32s()
	b, _ := y.T().Float32s()
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			t.Fatalf("(xW)^T != W^T x^T at %d: %v %v", i, a[i], b[i])
		}
	}
}

type recordingBackend struct {
	backend.Backend
	evals      int
	matmuls    int
	reduces    int
	lastMatMul backend.MatMul
	lastEval   *backend.Program
}

func (r *recordingBackend) reset() { r.evals, r.matmuls, r.reduces = 0, 0, 0 }

func (r *recordingBackend) Eval(p *backend.Program, out backend.Operand) error {
	r.evals++
	r.lastEval = p
	return r.Backend.Eval(p, out)
}

func (r *recordingBackend) Reduce(q *backend.Reduction) error {
	r.reduces++
	return r.Backend.Reduce(q)
}

func (r *recordingBackend) MatMul(m *backend.MatMul) error {
	r.matmuls++
	r.lastMatMul = *m
	return r.Backend.MatMul(m)
}

func TestMatMulPrecisionSetting(t *testing.T) {
	d := &Maker{be: CPU().be}
	if d.MatMulPrecision() != FP32 {
		t.Fatal("default precision is not FP32")
	}
	d.SetMatMulPrecision(TF32)
	rec := &recordingBackend{Backend: CPU().be}
	d.be = rec
	d.Ones(Float32, 2, 2).MatMul(d.Ones(Float32, 2, 2)).Err()
	if rec.lastMatMul.Precision != backend.TF32 {
		t.Errorf("precision not passed to the backend")
	}
}
