package fft

import (
	"fmt"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/cufft"
)

// The GPU path: cuFFT plans from a cache per device, with work areas on
// gocu's allocator, queued on the device's array stream.

// planCacheSize is the number of plans kept per device (CuPy keeps 16).
const planCacheSize = 16

type engine struct {
	dev   *cuda.Device
	st    *cuda.Stream
	cache *cufft.Cache
}

type engineEntry struct {
	once sync.Once
	e    *engine
	err  error
}

var engines sync.Map // *cuda.Device → *engineEntry

func engineFor(gd *gocu.Device) (*engine, error) {
	cd := gd.CUDA()
	if cd == nil {
		return nil, fmt.Errorf("%v is not a CUDA device", gd)
	}
	v, _ := engines.LoadOrStore(cd, new(engineEntry))
	en := v.(*engineEntry)
	en.once.Do(func() {
		if err := cufft.Load(); err != nil {
			en.err = err
			return
		}
		st := array.On(gd).CUDAStream()
		alloc := func(_ uintptr, bytes int) (uint64, func(), error) {
			m, err := cd.AllocOn(st, max(bytes, 16))
			if err != nil {
				return 0, nil, err
			}
			return uint64(m.Ptr()), func() { _ = m.FreeOn(st) }, nil
		}
		en.e = &engine{dev: cd, st: st, cache: cufft.NewCache(planCacheSize, alloc)}
	})
	return en.e, en.err
}

// isGPU reports whether x lives on a CUDA device.
func isGPU(x *array.Array) bool { return array.On(x.Device()).IsGPU() }

// devPtr returns the device address of a contiguous array and a function
// that drops the buffer view.
func devPtr(x *array.Array) (uint64, func(), error) {
	v := x
	if x.DType().IsComplex() {
		v = x.ViewAsReal()
	}
	var b interface {
		DevicePointer() (cuda.DevicePtr, error)
		Free() error
		Err() error
	}
	switch v.DType() {
	case array.Float32:
		b = array.AsBuffer[float32](v)
	case array.Float64:
		b = array.AsBuffer[float64](v)
	default:
		return 0, nil, fmt.Errorf("no cuFFT type for %v", x.DType())
	}
	if err := b.Err(); err != nil {
		return 0, nil, err
	}
	p, err := b.DevicePointer()
	if err != nil {
		return 0, nil, err
	}
	return uint64(p), func() {
		_ = b.Free()
		if v != x {
			v.Close()
		}
	}, nil
}

// exec runs one cuFFT transform from in to out (both contiguous).
func exec(gd *gocu.Device, l cufft.Layout, t cufft.Type, in, out *array.Array, dir cufft.Direction) error {
	e, err := engineFor(gd)
	if err != nil {
		return err
	}
	ip, freeIn, err := devPtr(in)
	if err != nil {
		return err
	}
	defer freeIn()
	op, freeOut, err := devPtr(out)
	if err != nil {
		return err
	}
	defer freeOut()
	return e.dev.WithContext(func() error {
		p, err := e.cache.Get(l, t, e.st.Handle())
		if err != nil {
			return err
		}
		return p.Exec(ip, op, dir)
	})
}

// cufftType is the plan type of a transform kind in single or double
// precision.
func cufftType(k kind, one bool) cufft.Type {
	switch {
	case k == r2c && one:
		return cufft.R2C
	case k == r2c:
		return cufft.D2Z
	case k == c2r && one:
		return cufft.C2R
	case k == c2r:
		return cufft.Z2D
	case one:
		return cufft.C2C
	}
	return cufft.Z2Z
}

// resize crops or pads x's last axis to n with zeros.
func resize(x *array.Array, n int) *array.Array {
	shape := x.Shape()
	m := shape[len(shape)-1]
	switch {
	case m == n:
		return x
	case m > n:
		return x.Slice(array.Ellipsis, array.S(0, n))
	}
	ps := append([]int(nil), shape...)
	ps[len(ps)-1] = n - m
	z := array.On(x.Device()).Zeros(x.DType(), ps...)
	defer z.Close()
	return array.Concat(-1, x, z)
}

// gpuTransform runs a transform over the trailing dims of x (moved there
// already): dims are the transform's lengths (its output lengths for c2r).
func gpuTransform(op string, x *array.Array, k kind, dims []int, inverse bool, f float64, one bool) *array.Array {
	gd := x.Device()
	shape := x.Shape()
	r, q := len(shape), len(dims)
	cdt, rdt := array.Complex128, array.Float64
	if one {
		cdt, rdt = array.Complex64, array.Float32
	}
	// Every intermediate is closed as soon as the next one holds its
	// data: one left to the collector keeps its device memory, so that
	// the next call allocates afresh from the driver.
	in, owned := x, false
	step := func(next *array.Array) {
		if owned {
			in.Close()
		}
		in, owned = next, true
	}
	for i := 0; i < q; i++ {
		want := dims[i]
		if i == q-1 && k == c2r {
			want = dims[i]/2 + 1
		}
		if shape[r-q+i] != want {
			m := in.MoveAxis(r-q+i, -1)
			z := resize(m, want)
			step(z.MoveAxis(-1, r-q+i))
			closeAll(m, z)
		}
	}
	inDT, outDT := cdt, cdt
	switch k {
	case r2c:
		inDT = rdt
	case c2r:
		outDT = rdt
	}
	if in.DType() != inDT {
		step(in.AsType(inDT))
	}
	if k == c2r {
		step(in.Copy()) // cuFFT's C2R overwrites its input
	} else {
		step(in.Contiguous()) // C2C and R2C out of place leave it intact
	}
	defer in.Close()
	if err := in.Err(); err != nil {
		return array.Failed(err)
	}
	oshape := append([]int(nil), shape[:r-q]...)
	oshape = append(oshape, dims...)
	if k == r2c {
		oshape[r-1] = dims[q-1]/2 + 1
	}
	out := array.On(gd).Empty(outDT, oshape...)
	if err := out.Err(); err != nil {
		return array.Failed(err)
	}
	batch := 1
	for _, d := range shape[:r-q] {
		batch *= d
	}
	if batch == 0 {
		return out
	}
	dir := cufft.Forward
	if inverse {
		dir = cufft.Inverse
	}
	l := cufft.Layout{N: append([]int(nil), dims...), Batch: batch}
	if err := exec(gd, l, cufftType(k, one), in, out, dir); err != nil {
		out.Close()
		return array.Failed(&Error{Op: op, Msg: err.Error()})
	}
	if f != 1 {
		// Lazy: the scale fuses into whatever reads the result next.
		y := out.Mul(f)
		out.Close()
		return y
	}
	return out
}

// closeAll closes intermediate arrays; x itself may be among them, as
// resize returns its argument when no change is needed.
func closeAll(arrs ...*array.Array) {
	seen := map[*array.Array]bool{}
	for _, a := range arrs {
		if a != nil && !seen[a] {
			seen[a] = true
			a.Close()
		}
	}
}

// trailingGPU runs an N-D transform over the last one to three axes of a
// GPU array as one cuFFT plan; nil where it does not apply.
func trailingGPU(op string, x *array.Array, k kind, inverse bool, s, axes []int, norm Norm) *array.Array {
	if x.Err() != nil || !isGPU(x) || len(axes) > 3 {
		return nil
	}
	shape := x.Shape()
	r, q := len(shape), len(axes)
	dims := make([]int, q)
	total := 1
	for i, ax := range axes {
		if ax != r-q+i {
			return nil
		}
		dims[i] = s[i]
		if dims[i] == 0 {
			dims[i] = shape[ax]
			if k == c2r && i == q-1 {
				dims[i] = 2 * (shape[ax] - 1)
			}
		}
		if dims[i] < 1 {
			return nil // transform1 reports it
		}
		total *= dims[i]
	}
	dt := x.DType()
	if dt == array.Float8E4M3 || dt == array.Float8E5M2 || (k == r2c && dt.IsComplex()) {
		return nil
	}
	f, err := scale(op, norm, total, inverse)
	if err != nil {
		return array.Failed(err)
	}
	return gpuTransform(op, x, k, dims, inverse, f, single(dt))
}
