package dist

import (
	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// hostLocal is the host backend inside one process: the ranks' arrays are
// in host memory (the CPU or the simulator), and a collective is array
// operations on them, run at once. It stands in for NCCL where there is
// no GPU, so that data-parallel code runs, and is tested, on the CPU with
// any number of ranks.
type hostLocal struct {
	devs []*gocu.Device
}

func (h *hostLocal) name() string { return "host" }

func (h *hostLocal) allReduce(xs []*array.Array, op Op) error {
	if len(xs) == 1 {
		return nil // one rank: every reduction is the identity
	}
	r, err := reduce(xs, op, len(xs))
	if err != nil {
		return err
	}
	defer r.Close()
	return assignAll(xs, r)
}

func (h *hostLocal) broadcast(xs []*array.Array, root int) error {
	src := xs[root]
	for i, x := range xs {
		if i == root {
			continue
		}
		if err := assignFrom(x, src); err != nil {
			return err
		}
	}
	return nil
}

func (h *hostLocal) reduceScatter(sends, recvs []*array.Array, op Op) error {
	flat := make([]*array.Array, len(sends))
	for i, x := range sends {
		flat[i] = x.Reshape(-1)
	}
	r, err := reduce(flat, op, len(sends))
	if err != nil {
		return err
	}
	defer r.Close()
	return scatterParts(recvs, r, func(i int) int { return i })
}

func (h *hostLocal) allGather(sends, recvs []*array.Array) error {
	all, err := gather(sends)
	if err != nil {
		return err
	}
	defer all.Close()
	for _, x := range recvs {
		if err := assignFrom(x, all.Reshape(x.Shape()...)); err != nil {
			return err
		}
	}
	return nil
}

// gather concatenates xs raveled, on xs[0]'s device.
func gather(xs []*array.Array) (*array.Array, error) {
	dev := xs[0].Device()
	flat := make([]*array.Array, len(xs))
	for i, x := range xs {
		if x.Device() != dev {
			x = x.To(dev)
		}
		flat[i] = x.Reshape(-1)
	}
	all := array.Concat(0, flat...)
	return all, all.Err()
}

// scatterParts writes part rank(i) of the flat array r into recvs[i].
func scatterParts(recvs []*array.Array, r *array.Array, rank func(int) int) error {
	for i, x := range recvs {
		k := x.Size()
		part := r.Slice(array.S(rank(i)*k, (rank(i)+1)*k)).Reshape(x.Shape()...)
		err := assignFrom(x, part)
		part.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (h *hostLocal) group(fn func() error) error { return fn() }
func (h *hostLocal) close() error                { return nil }
func (h *hostLocal) abort() error                { return nil }
func (h *hostLocal) failure() error              { return nil }

// reduce combines xs (host arrays of one dtype and shape) with op in rank
// order, as nranks ranks would, into a new array on xs[0]'s device. Float
// Avg scales each term by 1/nranks, rounded to the dtype, before summing
// (NCCL's pre-multiplied sum); integer Avg divides the sum and truncates
// (NCCL's post-division).
func reduce(xs []*array.Array, op Op, nranks int) (*array.Array, error) {
	dev := xs[0].Device()
	dt := xs[0].DType()
	float := dt == array.Float32 || dt == array.Float64 || dt == array.Float16 ||
		dt == array.BFloat16 || dt == array.Float8E4M3 || dt == array.Float8E5M2
	var acc *array.Array
	for i, x := range xs {
		v := x
		if v.Device() != dev {
			v = v.To(dev)
		}
		if op == Avg && float {
			v = v.Mul(1 / float64(nranks))
		}
		if i == 0 {
			acc = v
			continue
		}
		switch op {
		case Sum, Avg:
			acc = acc.Add(v)
		case Prod:
			acc = acc.Mul(v)
		case Max:
			acc = acc.Maximum(v)
		case Min:
			acc = acc.Minimum(v)
		}
	}
	if op == Avg && !float {
		acc = acc.Div(nranks).AsType(dt)
	}
	out := acc.Copy()
	return out, out.Err()
}

// assignAll writes r into every array of xs, through host memory for those
// on another device than r.
func assignAll(xs []*array.Array, r *array.Array) error {
	for _, x := range xs {
		if err := assignFrom(x, r); err != nil {
			return err
		}
	}
	return nil
}

func assignFrom(x, src *array.Array) error {
	if src.Device() != x.Device() {
		src = src.To(x.Device())
		defer src.Close()
	}
	return x.Assign(src)
}
