package nn

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
)

// The fused update on a GPU: CUDA C compiled at run time (gocu.Compile)
// that updates up to maxTensors parameters per launch. The tensors travel
// by value in one kernel argument, a struct of device pointers and sizes;
// block row y of the grid updates tensor y with a grid-stride loop. The
// step count lives in device memory and a one-thread kernel advances it
// first, so that a captured graph replays the right bias corrections.
// Compiled with --fmad=false: every product is rounded before it is added,
// as on the CPU.

const maxTensors = 32

// tensorList is the kernel's struct List, field for field.
type tensorList struct {
	P, G, M, V [maxTensors]cuda.DevicePtr
	N          [maxTensors]int64
	First      [maxTensors]int32 // SGD: the momentum buffer is set, not blended
}

const optimTemplate = `
typedef %[1]s T;
#define MAXT %[2]d
#define TINY %[3]s // the smallest normal number: moments below it are flushed to zero
struct List { T* p[MAXT]; const T* g[MAXT]; T* m[MAXT]; T* v[MAXT]; long long n[MAXT]; int first[MAXT]; };

extern "C" __global__ void gocu_count(double* t) { *t += 1.0; }

extern "C" __global__ void gocu_adam(List l, const double* count, const double* lrp, double beta1, double beta2,
                                     double eps, double wd, int decoupled) {
    int k = blockIdx.y;
    long long n = l.n[k];
    T* __restrict__ p = l.p[k];
    const T* __restrict__ g = l.g[k];
    T* __restrict__ m = l.m[k];
    T* __restrict__ v = l.v[k];
    // The grid is sized by the largest tensor: blocks past a small one
    // leave before the powers, which cost more than its update.
    if ((long long)blockIdx.x * blockDim.x >= n) return;
    double t = *count, lr = *lrp;
    T stepSize = (T)(lr / (1.0 - pow(beta1, t)));
    T bc2s = (T)sqrt(1.0 - pow(beta2, t));
    T b1 = (T)(1.0 - beta1), b2 = (T)beta2, c2 = (T)(1.0 - beta2), e = (T)eps, w = (T)wd;
    T decay = (T)1 - (T)((T)lr * w);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        T gi = g[i], pi = p[i];
        if (decoupled) pi = pi * decay;
        else if (w != (T)0) gi = gi + w * pi;
        T mi = m[i];
        mi = mi + b1 * (gi - mi);
        T vi = b2 * v[i] + (c2 * gi) * gi;
        if (mi < TINY && mi > -TINY) mi = 0;
        if (vi < TINY) vi = 0;
        m[i] = mi;
        v[i] = vi;
        T den = sqrt(vi) / bc2s + e;
        p[i] = pi - stepSize * (mi / den);
    }
}

extern "C" __global__ void gocu_sgd(List l, const double* lrp, double momentum, double dampening, double wd,
                                    int nesterov) {
    int k = blockIdx.y;
    long long n = l.n[k];
    T* __restrict__ p = l.p[k];
    const T* __restrict__ g = l.g[k];
    T* __restrict__ b = l.m[k];
    int first = l.first[k];
    T r = (T)*lrp, mom = (T)momentum, damp = (T)(1.0 - dampening), w = (T)wd;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        T gi = g[i];
        if (w != (T)0) gi = gi + w * p[i];
        if (mom != (T)0) {
            T bi = first ? gi : mom * b[i] + damp * gi;
            if (bi < TINY && bi > -TINY) bi = 0;
            b[i] = bi;
            gi = nesterov ? gi + mom * bi : bi;
        }
        p[i] = p[i] - r * gi;
    }
}
`

// optimSource returns the CUDA C of the fused optimiser kernels for
// float32 or float64 parameters (for inspection and compile checks).
func optimSource(dt array.DType) string {
	t, tiny := "float", "1.17549435e-38f"
	if dt == array.Float64 {
		t, tiny = "double", "2.2250738585072014e-308"
	}
	return strings.TrimSpace(fmt.Sprintf(optimTemplate, t, maxTensors, tiny)) + "\n"
}

type optimKernels struct {
	count, adam, sgd *gocu.Kernel
}

var kernelCache sync.Map // kernelKey -> *optimKernels

type kernelKey struct {
	dev *gocu.Device
	dt  array.DType
}

func kernels(dev *gocu.Device, dt array.DType) (*optimKernels, error) {
	k := kernelKey{dev, dt}
	if ks, ok := kernelCache.Load(k); ok {
		return ks.(*optimKernels), nil
	}
	mod, err := dev.Compile(optimSource(dt), gocu.Flags("--fmad=false"), gocu.Name("gocu_optim.cu"))
	if err != nil {
		return nil, fmt.Errorf("nn: compiling the fused optimiser: %w", err)
	}
	ks := &optimKernels{}
	for name, dst := range map[string]**gocu.Kernel{"gocu_count": &ks.count, "gocu_adam": &ks.adam, "gocu_sgd": &ks.sgd} {
		if *dst, err = mod.Kernel(name); err != nil {
			return nil, err
		}
	}
	got, _ := kernelCache.LoadOrStore(k, ks)
	return got.(*optimKernels), nil
}

// devPtrs caches the device addresses of a parameter's persistent arrays
// (value and moments): buffers over their memory, kept while the arrays
// are the same.
type devPtrs struct {
	val, m, v *array.Array
	bufs      []interface{ Free() error }
	p, pm, pv cuda.DevicePtr
}

func (d *devPtrs) release() {
	for _, b := range d.bufs {
		_ = b.Free()
	}
	*d = devPtrs{}
}

// devPtr returns the device address of a contiguous array's first element
// and the buffer that keeps its memory (free it when done).
func devPtr(a *array.Array) (cuda.DevicePtr, interface{ Free() error }, error) {
	if a == nil {
		return 0, nil, nil
	}
	switch a.DType() {
	case array.Float32:
		b := array.AsBuffer[float32](a)
		p, err := b.DevicePointer()
		return p, b, err
	case array.Float64:
		b := array.AsBuffer[float64](a)
		p, err := b.DevicePointer()
		return p, b, err
	}
	return 0, nil, fmt.Errorf("nn: no device pointer for a %v array", a.DType())
}

func (d *devPtrs) refresh(it item) error {
	if d.val == it.val && d.m == it.st.m && d.v == it.st.v && d.val != nil {
		return nil
	}
	d.release()
	for _, x := range []struct {
		a   *array.Array
		dst *cuda.DevicePtr
	}{{it.val, &d.p}, {it.st.m, &d.pm}, {it.st.v, &d.pv}} {
		p, b, err := devPtr(x.a)
		if err != nil {
			d.release()
			return err
		}
		if b != nil {
			d.bufs = append(d.bufs, b)
		}
		*x.dst = p
	}
	d.val, d.m, d.v = it.val, it.st.m, it.st.v
	return nil
}

// updateGPU launches the fused update for items (one device, one dtype).
func (o *opt) updateGPU(items []item, h hyper) error {
	dev := items[0].val.Device()
	ks, err := kernels(dev, items[0].val.DType())
	if err != nil {
		return err
	}
	lrPtr, err := o.deviceLR(dev, h.lr)
	if err != nil {
		return err
	}
	var countPtr cuda.DevicePtr
	if h.kind == kindAdam {
		c := o.counts[dev]
		if c == nil {
			// The steps before this one: a state loaded or a first GPU
			// update after CPU steps continue the count.
			c = array.On(dev).Full(array.Float64, float64(h.step-1)).Copy().Persist()
			if err := c.Err(); err != nil {
				return err
			}
			o.counts[dev] = c
		}
		if countPtr, err = o.pinned(c); err != nil {
			return err
		}
		if o.counted[dev] != h.step {
			if err := ks.count.Launch(gocu.Config{Grid: gocu.Dim3{X: 1, Y: 1, Z: 1}, Block: gocu.Dim3{X: 1, Y: 1, Z: 1}}, countPtr); err != nil {
				return fmt.Errorf("nn: optimiser step count: %w", err)
			}
			o.counted[dev] = h.step
		}
	}
	for start := 0; start < len(items); start += maxTensors {
		chunk := items[start:min(start+maxTensors, len(items))]
		var l tensorList
		var grads []interface{ Free() error }
		maxN := 0
		for i, it := range chunk {
			if err := it.st.dp.refresh(it); err != nil {
				return err
			}
			gp, gb, err := devPtr(it.g)
			if err != nil {
				return err
			}
			grads = append(grads, gb)
			n := it.val.Size()
			l.P[i], l.G[i], l.M[i], l.V[i], l.N[i] = it.st.dp.p, gp, it.st.dp.pm, it.st.dp.pv, int64(n)
			maxN = max(maxN, n)
			if it.st.fresh {
				l.First[i] = 1
			}
		}
		// The kernels stride over each tensor: 1024 blocks a tensor fill
		// the GPU, and more would mostly start only to leave (a chunk
		// mixes a 38.6M-element embedding with biases of 768).
		const block = 256
		cfg := gocu.Config{Grid: gocu.Dim3{X: int32(min(max((maxN+block-1)/block, 1), 1024)), Y: int32(len(chunk)), Z: 1},
			Block: gocu.Dim3{X: block, Y: 1, Z: 1}}
		if h.kind == kindAdam {
			dec := int32(0)
			if h.decoupled {
				dec = 1
			}
			err = ks.adam.Launch(cfg, l, countPtr, lrPtr, h.beta1, h.beta2, h.eps, h.wd, dec)
		} else {
			nest := int32(0)
			if h.nesterov {
				nest = 1
			}
			err = ks.sgd.Launch(cfg, l, lrPtr, h.momentum, h.dampening, h.wd, nest)
		}
		for _, b := range grads {
			_ = b.Free()
		}
		if err != nil {
			return fmt.Errorf("nn: fused optimiser step: %w", err)
		}
	}
	return nil
}

// deviceLR returns the device copy of the learning rate (float64, 0-d),
// written when lr differs from what it holds: the kernels read it there,
// so that SetLR between replays of a captured step takes effect.
func (o *opt) deviceLR(dev *gocu.Device, lr float64) (cuda.DevicePtr, error) {
	a := o.lrs[dev]
	if a == nil {
		a = array.On(dev).Full(array.Float64, lr).Copy().Persist()
		if err := a.Err(); err != nil {
			return 0, err
		}
		o.lrs[dev] = a
		o.lrVal[dev] = lr
	} else if o.lrVal[dev] != lr {
		if err := a.Assign(lr); err != nil {
			return 0, err
		}
		o.lrVal[dev] = lr
	}
	return o.pinned(a)
}

// pinned returns the device address of one of the optimiser's own
// persistent arrays (step count, learning rate), keeping a buffer over it
// for the optimiser's lifetime.
func (o *opt) pinned(a *array.Array) (cuda.DevicePtr, error) {
	if p, ok := o.ptrs[a]; ok {
		return p, nil
	}
	p, b, err := devPtr(a)
	if err != nil {
		return 0, err
	}
	o.ptrs[a] = p
	o.keep = append(o.keep, b)
	return p, nil
}
