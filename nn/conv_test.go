package nn_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// convCase is a convolution's geometry: input (n, c, h, w), o output
// channels, kernel (kh, kw), stride, padding and dilation (height,
// width), groups.
type convCase struct {
	n, c, h, w, o, kh, kw int
	s, p, d               [2]int
	g                     int
	bias                  bool
}

func (cc convCase) String() string {
	return fmt.Sprintf("x%dx%dx%dx%d_o%d_k%dx%d_s%v_p%v_d%v_g%d_b%v", cc.n, cc.c, cc.h, cc.w, cc.o, cc.kh, cc.kw, cc.s, cc.p, cc.d, cc.g, cc.bias)
}

// convRef is a direct 2-D cross-correlation in float64, from torch's
// definition: out[n][o][i][j] = b[o] + Σ w[o][ci][a][e]·x[n][g·cg+ci]
// [i·s+a·d-p][j·s+e·d-p] over the input channels of o's group.
func convRef(x, w, b []float64, cc convCase) ([]float64, int, int) {
	ho := (cc.h+2*cc.p[0]-cc.d[0]*(cc.kh-1)-1)/cc.s[0] + 1
	wo := (cc.w+2*cc.p[1]-cc.d[1]*(cc.kw-1)-1)/cc.s[1] + 1
	cg, og := cc.c/cc.g, cc.o/cc.g
	out := make([]float64, cc.n*cc.o*ho*wo)
	for n := range cc.n {
		for o := range cc.o {
			grp := o / og
			for i := range ho {
				for j := range wo {
					s := 0.0
					if b != nil {
						s = b[o]
					}
					for ci := range cg {
						for a := range cc.kh {
							for e := range cc.kw {
								y := i*cc.s[0] + a*cc.d[0] - cc.p[0]
								z := j*cc.s[1] + e*cc.d[1] - cc.p[1]
								if y < 0 || y >= cc.h || z < 0 || z >= cc.w {
									continue
								}
								s += w[((o*cg+ci)*cc.kh+a)*cc.kw+e] * x[((n*cc.c+grp*cg+ci)*cc.h+y)*cc.w+z]
							}
						}
					}
					out[((n*cc.o+o)*ho+i)*wo+j] = s
				}
			}
		}
	}
	return out, ho, wo
}

var convCases = []convCase{
	{2, 3, 6, 5, 4, 3, 3, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1, true},
	{2, 3, 7, 6, 2, 2, 3, [2]int{2, 1}, [2]int{1, 0}, [2]int{1, 1}, 1, true},
	{1, 2, 7, 8, 3, 3, 2, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3}, 1, false},
	{2, 4, 5, 5, 6, 3, 3, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 2, true},
	{2, 4, 6, 5, 4, 3, 1, [2]int{2, 1}, [2]int{1, 0}, [2]int{1, 1}, 4, true}, // depthwise
	{1, 6, 5, 7, 3, 2, 2, [2]int{2, 3}, [2]int{1, 1}, [2]int{2, 1}, 3, false},
	{3, 2, 4, 4, 5, 1, 1, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1, true}, // 1×1
	{1, 2, 3, 3, 2, 3, 3, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 1, true}, // kernel = input
}

func newConv(rng *array.RNG, cc convCase) *nn.Conv2d {
	return nn.NewConv2dWith(rng, cc.c, cc.o, [2]int{cc.kh, cc.kw}, &nn.Conv2dOptions{
		Stride: cc.s, Padding: cc.p, Dilation: cc.d, Groups: cc.g, NoBias: !cc.bias})
}

// TestConv2dGeneral compares Conv2d with the direct convolution, in
// float32 and float64, and checks its gradients with respect to the
// input, the weight and the bias.
func TestConv2dGeneral(t *testing.T) {
	for _, cc := range convCases {
		t.Run(cc.String(), func(t *testing.T) {
			rng := array.CPU().NewRNG(41)
			conv := newConv(rng, cc)
			if s := fmt.Sprint(conv.Weight.Shape()); s != fmt.Sprint([]int{cc.o, cc.c / cc.g, cc.kh, cc.kw}) {
				t.Fatalf("weight of shape %s", s)
			}
			if (conv.Bias != nil) != cc.bias {
				t.Fatalf("bias %v, want %v", conv.Bias, cc.bias)
			}
			x := rng.Normal(array.Float32, 0, 1, cc.n, cc.c, cc.h, cc.w)
			var b []float64
			if cc.bias {
				b = f64(t, conv.Bias.Value())
			}
			want, ho, wo := convRef(f64(t, x), f64(t, conv.Weight.Value()), b, cc)
			y := conv.Forward(grad.Const(x))
			if s := fmt.Sprint(y.Shape()); s != fmt.Sprint([]int{cc.n, cc.o, ho, wo}) {
				t.Fatalf("output of shape %s, want (%d, %d, %d, %d)", s, cc.n, cc.o, ho, wo)
			}
			near(t, "float32", f64(t, y.Value()), want, 1e-5)
			if err := nn.Cast(conv, array.Float64); err != nil {
				t.Fatal(err)
			}
			x64 := x.AsType(array.Float64)
			near(t, "float64", f64(t, conv.Forward(grad.Const(x64)).Value()), want, 1e-13)
			// Unbatched input: the first image.
			one := conv.Forward(grad.Const(x64.Slice(array.Idx(0))))
			near(t, "unbatched", f64(t, one.Value()), want[:cc.o*ho*wo], 1e-13)
			checkConv(t, conv, &conv.Weight, &conv.Bias, x64)
		})
	}
}

// checkConv runs grad.Check on the layer as a function of its input,
// weight and bias (the pointers to its fields).
func checkConv(t *testing.T, m nn.Module, w, b **grad.Var, x *array.Array) {
	t.Helper()
	in := []*array.Array{x, (*w).Value()}
	if *b != nil {
		in = append(in, (*b).Value())
	}
	w0, b0 := *w, *b
	defer func() { *w, *b = w0, b0 }()
	f := func(v ...*grad.Var) *grad.Var {
		*w = v[1]
		if len(v) > 2 {
			*b = v[2]
		}
		return m.Forward(v[0])
	}
	if err := grad.Check(f, in, 1e-6); err != nil {
		t.Fatal(err)
	}
}

// TestConv1d compares Conv1d with a direct 1-D convolution and checks its
// gradients.
func TestConv1d(t *testing.T) {
	for _, cc := range []struct{ n, c, l, o, k, s, p, d, g int }{
		{2, 3, 9, 4, 3, 1, 0, 1, 1},
		{2, 4, 10, 6, 3, 2, 2, 2, 2},
		{1, 3, 7, 3, 2, 3, 1, 1, 3},
		{3, 2, 5, 2, 5, 1, 0, 1, 1},
	} {
		t.Run(fmt.Sprint(cc), func(t *testing.T) {
			rng := array.CPU().NewRNG(42)
			conv := nn.NewConv1d(rng, cc.c, cc.o, cc.k, &nn.Conv1dOptions{Stride: cc.s, Padding: cc.p, Dilation: cc.d, Groups: cc.g})
			if err := nn.Cast(conv, array.Float64); err != nil {
				t.Fatal(err)
			}
			x := rng.Normal(array.Float64, 0, 1, cc.n, cc.c, cc.l)
			xs, ws, bs := f64(t, x), f64(t, conv.Weight.Value()), f64(t, conv.Bias.Value())
			lo := (cc.l+2*cc.p-cc.d*(cc.k-1)-1)/cc.s + 1
			cg, og := cc.c/cc.g, cc.o/cc.g
			want := make([]float64, cc.n*cc.o*lo)
			for n := range cc.n {
				for o := range cc.o {
					for i := range lo {
						s := bs[o]
						for ci := range cg {
							for e := range cc.k {
								if z := i*cc.s + e*cc.d - cc.p; z >= 0 && z < cc.l {
									s += ws[(o*cg+ci)*cc.k+e] * xs[(n*cc.c+o/og*cg+ci)*cc.l+z]
								}
							}
						}
						want[(n*cc.o+o)*lo+i] = s
					}
				}
			}
			y := conv.Forward(grad.Const(x))
			if s := fmt.Sprint(y.Shape()); s != fmt.Sprint([]int{cc.n, cc.o, lo}) {
				t.Fatalf("output of shape %s", s)
			}
			near(t, "conv1d", f64(t, y.Value()), want, 1e-13)
			one := conv.Forward(grad.Const(x.Slice(array.Idx(0))))
			near(t, "unbatched", f64(t, one.Value()), want[:cc.o*lo], 1e-13)
			checkConv(t, conv, &conv.Weight, &conv.Bias, x)
		})
	}
}

// poolRef pools x (n, c, h, w) over k×k windows in float64 with torch's
// rules: max over the elements inside the input (padding is -Inf), or the
// average with the divisor k·k or the count of elements inside.
func poolRef(x []float64, n, c, h, w, k, s, p, d int, op string) ([]float64, int, int) {
	ho := (h+2*p-d*(k-1)-1)/s + 1
	wo := (w+2*p-d*(k-1)-1)/s + 1
	var out []float64
	for range n * c {
		img := x[:h*w]
		x = x[h*w:]
		for i := range ho {
			for j := range wo {
				m, sum, cnt := math.Inf(-1), 0.0, 0
				for a := range k {
					for e := range k {
						y, z := i*s+a*d-p, j*s+e*d-p
						if y < 0 || y >= h || z < 0 || z >= w {
							continue
						}
						m = math.Max(m, img[y*w+z])
						sum += img[y*w+z]
						cnt++
					}
				}
				switch op {
				case "max":
					out = append(out, m)
				case "avg":
					out = append(out, sum/float64(k*k))
				default:
					out = append(out, sum/float64(cnt))
				}
			}
		}
	}
	return out, ho, wo
}

func TestPools(t *testing.T) {
	rng := array.CPU().NewRNG(43)
	for _, pc := range []struct{ h, w, k, s, p, d int }{
		{6, 5, 2, 0, 0, 1}, {7, 7, 3, 2, 1, 1}, {5, 6, 3, 1, 1, 1}, {8, 7, 2, 2, 1, 2}, {4, 4, 4, 1, 2, 1}, {9, 8, 3, 3, 0, 2},
	} {
		x := rng.Normal(array.Float64, 0, 1, 2, 3, pc.h, pc.w)
		xs := f64(t, x)
		stride := pc.s
		if stride == 0 {
			stride = pc.k
		}
		mods := map[string]nn.Module{
			"max": &nn.MaxPool2d{K: pc.k, Stride: pc.s, Padding: pc.p, Dilation: pc.d},
		}
		if pc.d == 1 {
			mods["avg"] = &nn.AvgPool2d{K: pc.k, Stride: pc.s, Padding: pc.p}
			mods["avg exclude pad"] = &nn.AvgPool2d{K: pc.k, Stride: pc.s, Padding: pc.p, ExcludePad: true}
		}
		for op, m := range mods {
			t.Run(fmt.Sprintf("%s_%v", op, pc), func(t *testing.T) {
				want, ho, wo := poolRef(xs, 2, 3, pc.h, pc.w, pc.k, stride, pc.p, pc.d, strings.TrimPrefix(op, "avg exclude pad"))
				if op == "avg exclude pad" {
					want, ho, wo = poolRef(xs, 2, 3, pc.h, pc.w, pc.k, stride, pc.p, pc.d, "count")
				}
				y := m.Forward(grad.Const(x))
				if s := fmt.Sprint(y.Shape()); s != fmt.Sprint([]int{2, 3, ho, wo}) {
					t.Fatalf("output of shape %s, want (2, 3, %d, %d)", s, ho, wo)
				}
				near(t, op, f64(t, y.Value()), want, 1e-14)
				one := m.Forward(grad.Const(x.Slice(array.Idx(1))))
				near(t, "unbatched", f64(t, one.Value()), want[3*ho*wo:], 1e-14)
				if err := grad.Check(func(v ...*grad.Var) *grad.Var { return m.Forward(v[0]) }, []*array.Array{x}, 1e-6); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	// A tie sends the gradient to the first maximum of the window, as
	// torch's.
	x := grad.Param(array.FromSlice([]float64{1, 3, 3, 2, 0, 3, 3, 1, 5}, 1, 1, 3, 3))
	if err := (&nn.MaxPool2d{K: 2, Stride: 1}).Forward(x).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "tie gradient", f64(t, x.Grad()), []float64{0, 2, 0, 0, 0, 0, 1, 0, 1}, 0)
}

// adaptiveRef is torch's adaptive average pooling of one h×w image.
func adaptiveRef(x []float64, h, w, ho, wo int) []float64 {
	var out []float64
	for i := range ho {
		y0, y1 := int(math.Floor(float64(i*h)/float64(ho))), int(math.Ceil(float64((i+1)*h)/float64(ho)))
		for j := range wo {
			z0, z1 := int(math.Floor(float64(j*w)/float64(wo))), int(math.Ceil(float64((j+1)*w)/float64(wo)))
			s := 0.0
			for y := y0; y < y1; y++ {
				for z := z0; z < z1; z++ {
					s += x[y*w+z]
				}
			}
			out = append(out, s/float64((y1-y0)*(z1-z0)))
		}
	}
	return out
}

func TestAdaptiveAvgPool2d(t *testing.T) {
	rng := array.CPU().NewRNG(44)
	for _, c := range []struct{ h, w, ho, wo, sh, sw int }{
		{7, 5, 3, 2, 3, 2}, {6, 6, 1, 1, 1, 1}, {5, 4, 7, 3, 7, 3}, {4, 9, 0, 4, 4, 4}, {10, 10, 4, 0, 4, 10}, {3, 3, 3, 3, 3, 3},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			x := rng.Normal(array.Float64, 0, 1, 2, 2, c.h, c.w)
			m := nn.NewAdaptiveAvgPool2d(c.ho, c.wo)
			y := m.Forward(grad.Const(x))
			if s := fmt.Sprint(y.Shape()); s != fmt.Sprint([]int{2, 2, c.sh, c.sw}) {
				t.Fatalf("output of shape %s, want (2, 2, %d, %d)", s, c.sh, c.sw)
			}
			xs := f64(t, x)
			var want []float64
			for i := range 4 {
				want = append(want, adaptiveRef(xs[i*c.h*c.w:(i+1)*c.h*c.w], c.h, c.w, c.sh, c.sw)...)
			}
			near(t, "adaptive", f64(t, y.Value()), want, 1e-14)
			y32 := m.Forward(grad.Const(x.AsType(array.Float32)))
			if y32.DType() != array.Float32 {
				t.Fatalf("float32 input gives %v", y32.DType())
			}
			near(t, "float32", f64(t, y32.Value()), want, 1e-6)
			one := m.Forward(grad.Const(x.Slice(array.Idx(0))))
			near(t, "unbatched", f64(t, one.Value()), want[:2*c.sh*c.sw], 1e-14)
			if err := grad.Check(func(v ...*grad.Var) *grad.Var { return m.Forward(v[0]) }, []*array.Array{x}, 1e-6); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConvPoolErrors provokes every error of the convolutions and pools.
func TestConvPoolErrors(t *testing.T) {
	rng := array.CPU().NewRNG(45)
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 4, 5, 5))
	x1 := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 4, 6))
	conv := func(k [2]int, o *nn.Conv2dOptions) *grad.Var { return nn.NewConv2dWith(rng, 4, 6, k, o).Forward(x) }
	c1 := func(k int, o *nn.Conv1dOptions) *grad.Var { return nn.NewConv1d(rng, 4, 2, k, o).Forward(x1) }
	wrongW := nn.NewConv2d(rng, 4, 6, 3, 1, 0)
	wrongW.Weight = grad.Param(rng.Normal(array.Float32, 0, 1, 6, 4, 2, 3))
	wrongB := nn.NewConv2d(rng, 4, 6, 3, 1, 0)
	wrongB.Bias = grad.Param(rng.Normal(array.Float32, 0, 1, 5))
	cases := []struct {
		name string
		v    *grad.Var
		want string
		is   error
	}{
		{"channels", nn.NewConv2d(rng, 3, 6, 3, 1, 0).Forward(x), "input of shape [2 4 5 5], want (N, 3, H, W) or (3, H, W)", nil},
		{"groups 3", conv([2]int{3, 3}, &nn.Conv2dOptions{Groups: 3}), "4 input and 6 output channels in 3 groups", nn.ErrHyper},
		{"groups -1", conv([2]int{3, 3}, &nn.Conv2dOptions{Groups: -1}), "in -1 groups", nn.ErrHyper},
		{"out not a multiple", nn.NewConv2dWith(rng, 4, 3, [2]int{1, 1}, &nn.Conv2dOptions{Groups: 2}).Forward(x), "4 input and 3 output channels in 2 groups", nn.ErrHyper},
		{"kernel 6", conv([2]int{6, 3}, nil), "kernel 6x3 (dilation 1x1) larger than the padded input 5x5", nil},
		{"dilated kernel", conv([2]int{3, 3}, &nn.Conv2dOptions{Dilation: [2]int{1, 3}}), "kernel 3x3 (dilation 1x3) larger than the padded input 5x5", nil},
		{"kernel 0", conv([2]int{0, 3}, nil), "kernel (0, 3)", nn.ErrHyper},
		{"stride -1", conv([2]int{3, 3}, &nn.Conv2dOptions{Stride: [2]int{1, -1}}), "stride (1, -1)", nn.ErrHyper},
		{"dilation -2", conv([2]int{3, 3}, &nn.Conv2dOptions{Dilation: [2]int{-2, 1}}), "dilation (-2, 1)", nn.ErrHyper},
		{"padding -1", conv([2]int{3, 3}, &nn.Conv2dOptions{Padding: [2]int{0, -1}}), "padding (0, -1)", nn.ErrHyper},
		{"weight shape", wrongW.Forward(x), "weight of shape [6 4 2 3], want (6, 4, 3, 3)", nil},
		{"bias shape", wrongB.Forward(x), "bias of shape [5], want (6)", nil},
		{"2-D input", nn.NewConv2d(rng, 4, 6, 3, 1, 0).Forward(x.Reshape(8, 25)), "input of shape [8 25]", nil},
		{"Conv1d channels", nn.NewConv1d(rng, 3, 2, 3, nil).Forward(x1), "input of shape [2 4 6], want (N, 3, L) or (3, L)", nil},
		{"Conv1d 4-D input", nn.NewConv1d(rng, 4, 2, 3, nil).Forward(x), "input of shape [2 4 5 5], want (N, 4, L) or (4, L)", nil},
		{"Conv1d kernel 7", c1(7, nil), "larger than the padded input 1x6", nil},
		{"Conv1d stride 0 dilation -1", c1(3, &nn.Conv1dOptions{Dilation: -1}), "kernel 3, stride 1, padding 0, dilation -1", nn.ErrHyper},
		{"Conv1d groups", c1(3, &nn.Conv1dOptions{Groups: 3}), "4 input and 2 output channels in 3 groups", nn.ErrHyper},
		{"MaxPool2d kernel 6", nn.NewMaxPool2d(6).Forward(x), "larger than the padded input 5x5", nil},
		{"MaxPool2d padding 2 of 3", (&nn.MaxPool2d{K: 3, Padding: 2}).Forward(x), "padding 2: want at most half the kernel 3", nn.ErrHyper},
		{"MaxPool2d stride -1", (&nn.MaxPool2d{K: 2, Stride: -1}).Forward(x), "stride (-1, -1)", nn.ErrHyper},
		{"MaxPool2d 2-D", nn.NewMaxPool2d(2).Forward(x.Reshape(8, 25)), "want (N, C, H, W) or (C, H, W)", nil},
		{"AvgPool2d kernel 0", nn.NewAvgPool2d(0).Forward(x), "kernel (0, 0)", nn.ErrHyper},
		{"AvgPool2d padding", (&nn.AvgPool2d{K: 2, Padding: 2}).Forward(x), "padding 2: want at most half the kernel 2", nn.ErrHyper},
		{"AdaptiveAvgPool2d size", nn.NewAdaptiveAvgPool2d(-1, 2).Forward(x), "output size [-1 2]", nn.ErrHyper},
		{"AdaptiveAvgPool2d 5-D", nn.NewAdaptiveAvgPool2d(1, 1).Forward(x.Reshape(1, 2, 4, 5, 5)), "want (N, C, H, W) or (C, H, W)", nil},
		{"AdaptiveAvgPool2d empty", nn.NewAdaptiveAvgPool2d(2, 2).Forward(grad.Const(array.Zeros(array.Float32, 1, 2, 0, 3))), "want non-empty spatial axes", nil},
	}
	for _, c := range cases {
		err := c.v.Err()
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: error %v, want one containing %q (is %v)", c.name, err, c.want, c.is)
		}
	}
}
