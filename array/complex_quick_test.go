package array

import (
	"math/cmplx"
	"testing"
)

func TestComplexQuick(t *testing.T) {
	x := FromComplex([]complex64{1 + 2i, 3 - 4i, -1 + 0.5i}, 3)
	y := FromComplex([]complex64{2 - 1i, 0.5 + 1i, 1 + 1i}, 3)
	for name, f := range map[string]func(a, b complex128) complex128{
		"add": func(a, b complex128) complex128 { return a + b },
		"mul": func(a, b complex128) complex128 { return a * b },
		"div": func(a, b complex128) complex128 { return a / b },
	} {
		var z *Array
		switch name {
		case "add":
			z = x.Add(y)
		case "mul":
			z = x.Mul(y)
		case "div":
			z = x.Div(y)
		}
		got, err := z.Complex64s()
		if err != nil {
			t.Fatal(name, err)
		}
		xs, _ := x.Complex64s()
		ys, _ := y.Complex64s()
		for i := range got {
			w := f(complex128(xs[i]), complex128(ys[i]))
			if cmplx.Abs(complex128(got[i])-w) > 1e-5 {
				t.Errorf("%s[%d] = %v, want %v", name, i, got[i], w)
			}
		}
	}
	s, err := x.Sum().Complex64s()
	t.Log(s, err)
	p, err := x.Prod().Complex64s()
	t.Log(p, err)
	a, err := x.Abs().Float32s()
	t.Log(a, err)
	q, err := x.Sqrt().Complex64s()
	t.Log(q, err, cmplx.Sqrt(3-4i))
	m, err := x.Reshape(3, 1).MatMul(y.Reshape(1, 3)).Complex64s()
	t.Log(m, err)
}
