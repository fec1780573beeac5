package array

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// Shapes whose size overflows an int, or that no machine could hold, are
// sticky ErrValue errors naming the shape and the bytes: never a size of 0,
// a panic in makeslice or a fatal out-of-memory. Lazy arrays carry the
// error from construction, so Err and every later operation report it.
func TestHugeShapes(t *testing.T) {
	d := CPU()
	huge := d.Full(Bool, true).BroadcastTo(1 << 62) // a valid view: 2^62 bytes, no memory
	if err := huge.Err(); err != nil {
		t.Fatalf("broadcast view of 2^62 bools: %v", err)
	}
	one := func(shape ...int) *Array { return d.Full(Float32, 1).BroadcastTo(shape...) }
	cases := []struct {
		name string
		a    *Array
		msg  []string
	}{
		{"Zeros 2^40 x 2^40", d.Zeros(Float32, 1<<40, 1<<40),
			[]string{"Full: array is too big", "shape (1099511627776,1099511627776) of float32", "1208925819614629174706176 elements", "4835703278458516698824704 bytes (4 YiB)"}},
		{"Ones 2^33 x 2^31 .Add(1)", d.Ones(Float32, 1<<33, 1<<31).Add(1),
			[]string{"shape (8589934592,2147483648) of float32", "73786976294838206464 bytes (64 EiB)"}},
		{"Zeros 2^32 x 2^31", d.Zeros(Float32, 1<<32, 1<<31), []string{"shape (4294967296,2147483648)", "9223372036854775808 elements"}},
		{"Zeros 2^62", d.Zeros(Float32, 1<<62), []string{"shape (4611686018427387904,)", "18446744073709551616 bytes (16 EiB)"}},
		{"zero dimension", d.Zeros(Float32, 1<<40, 1<<40, 0), []string{"without its zero dimensions"}},
		{"Empty", d.Empty(Int64, 1<<61), []string{"Empty: array is too big", "18446744073709551616 bytes"}},
		{"broadcast result", d.Ones(Float32, 1<<33, 1).Add(d.Ones(Float32, 1, 1<<31)), []string{"Add: array is too big", "(8589934592,2147483648)"}},
		{"Where", Where(true, one(1<<40, 1), one(1, 1<<40)), []string{"Where: array is too big"}},
		{"BroadcastTo", d.Scalar(1.0).BroadcastTo(1<<40, 1<<40), []string{"BroadcastTo: array is too big"}},
		{"AsType widens", huge.AsType(Float64), []string{"AsType: array is too big", "(4611686018427387904,) of float64"}},
		{"unary widens", huge.Sqrt(), []string{"array is too big", "of float32"}},
		{"MatMul output", one(1<<40, 1).MatMul(one(1, 1<<40)), []string{"MatMul: array is too big", "(1099511627776,1099511627776)"}},
		{"MatMul batch", one(1<<40, 1<<40, 0, 1).MatMul(one(1, 1)), []string{"BroadcastTo: array is too big"}},
		{"Arange", d.Arange(Float32, 0, 1e30), []string{"Arange: array is too big", "1e+30 values"}},
		{"Arange overflowing quotient", d.Arange(Float64, -1e308, 1e308, 1e-300), []string{"Arange: array is too big"}},
		{"Linspace", d.Linspace(Float64, 0, 1, 1<<61), []string{"Linspace: array is too big"}},
		{"Eye", d.Eye(Float32, 1<<32), []string{"Eye: array is too big", "(4294967296,4294967296)"}},
		{"Uniform", d.NewRNG(1).Rand(1<<40, 1<<40), []string{"Uniform: array is too big"}},
		{"Image", FromImageOn(d.Device(), image.NewUniform(color.White), HWC, 3), []string{"FromImage: array is too big", "(2000000000,2000000000,3)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.a.Err()
			if !errors.Is(err, ErrValue) {
				t.Fatalf("err = %v, want ErrValue", err)
			}
			for _, m := range c.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q lacks %q", err, m)
				}
			}
			if c.a.Size() != 0 || c.a.Shape() != nil {
				t.Errorf("failed array has size %d shape %v", c.a.Size(), c.a.Shape())
			}
			// Sticky: what is computed from it, and every read, reports it.
			if err2 := c.a.Add(1).Sum().Err(); !errors.Is(err2, ErrValue) || err2.Error() != err.Error() {
				t.Errorf("a chain on the failed array: %v, want %v", err2, err)
			}
			if _, err3 := c.a.Float32s(); err3 == nil || err3.Error() != err.Error() {
				t.Errorf("Float32s: %v, want %v", err3, err)
			}
		})
	}

	// Reshape into a shape whose size overflows, including one that wraps
	// around to the array's own size.
	for _, shape := range [][]int{{1 << 40, 1 << 40, 0}, {1 << 62, 1 << 62, -1}, {1 << 32, 1 << 32, 2}} {
		src := d.Zeros(Float32, 0)
		if shape[2] == -1 || shape[2] == 2 {
			src = d.Zeros(Float32, 4)
		}
		if err := src.Reshape(shape...).Err(); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "overflows an int") {
			t.Errorf("Reshape%v: %v, want ErrShape overflow", shape, err)
		}
	}
	// Concat of lengths that add up past an int.
	if err := Concat(0, huge, huge).Err(); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "add up to more than an int") {
		t.Errorf("Concat: %v", err)
	}
	// Nothing is left broken.
	if v, err := d.Ones(Float32, 1000).Sum().Item(); err != nil || v != 1000 {
		t.Fatalf("after the failures the CPU gives %v, %v", v, err)
	}
}

// A shape that fits an int but not the machine fails with ErrOutOfMemory
// (and ErrDevice) when it is allocated, naming the shape and the bytes,
// instead of Go's fatal "runtime: out of memory". Lazy constants allocate
// when evaluated, so the error appears at Err.
func TestHugeAllocationsAreRefused(t *testing.T) {
	limit := cpu.MemoryLimit()
	if limit <= 0 {
		t.Skip("the machine's memory is unknown on this system: only overflow guards host allocations")
	}
	t.Logf("the machine can give %d bytes (%s)", limit, bytesString(int(limit)))
	d := CPU()
	z := d.Zeros(Float32, 1<<20, 1<<20) // 4 TiB
	check := func(name string, err error, msg ...string) {
		t.Helper()
		if !errors.Is(err, ErrOutOfMemory) || !errors.Is(err, ErrDevice) {
			t.Errorf("%s: %v, want ErrOutOfMemory and ErrDevice", name, err)
			return
		}
		for _, m := range msg {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q lacks %q", name, err, m)
			}
		}
	}
	if limit < 4<<40 {
		check("Zeros 4 TiB", z.Err(), "cannot allocate shape (1048576,1048576) of float32 on cpu", "4398046511104 bytes (4 TiB)")
		check("Zeros 4 TiB, again", z.Add(1).Err(), "4398046511104 bytes")
	}
	n := int(limit) + 1
	check("Empty", d.Empty(Uint8, n).Err(), fmt.Sprintf("shape (%d,) of uint8", n), fmt.Sprintf("%d bytes", n))
	check("Ones evaluated", d.Ones(Uint8, n).Eval().Err())
	check("Copy", d.Full(Uint8, 1).BroadcastTo(n).Copy().Err())
	check("Image", FromImageOn(d.Device(), image.NewUniform(color.White), HWC, 1).Err(), "on the host", "(2000000000,2000000000,1)")
	if v, err := d.Ones(Float32, 1000).Sum().Item(); err != nil || v != 1000 {
		t.Fatalf("after the failures the CPU gives %v, %v", v, err)
	}
}

// Dim of an axis the array does not have is ErrAxis, as for every other
// operation that takes an axis; a failed array returns its own error.
func TestDimOutOfRange(t *testing.T) {
	x := CPU().Ones(Float32, 2, 3)
	for _, c := range []struct{ i, want int }{{0, 2}, {1, 3}, {-1, 3}, {-2, 2}} {
		if got, err := x.Dim(c.i); got != c.want || err != nil {
			t.Errorf("Dim(%d) = %d, %v; want %d", c.i, got, err, c.want)
		}
	}
	for _, i := range []int{2, 7, -3, math.MinInt} {
		got, err := x.Dim(i)
		if got != 0 || !errors.Is(err, ErrAxis) || !strings.Contains(err.Error(), fmt.Sprintf("array: Dim: axis %d is out of bounds for an array of dimension 2", i)) {
			t.Errorf("Dim(%d) = %d, %v; want ErrAxis", i, got, err)
		}
	}
	bad := x.Reshape(4)
	if _, err := bad.Dim(0); !errors.Is(err, ErrShape) {
		t.Errorf("Dim of a failed array: %v, want its ErrShape", err)
	}
	if _, err := (*Array)(nil).Dim(0); !errors.Is(err, ErrValue) {
		t.Errorf("Dim of nil: %v", err)
	}
	if _, err := CPU().Scalar(1.0).Dim(0); !errors.Is(err, ErrAxis) {
		t.Errorf("Dim of a 0-d array: %v", err)
	}
}
