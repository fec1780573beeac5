package dist

import (
	"fmt"
	"slices"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/nccl"
)

// AllToAll sends every local rank's pieces to the ranks they are for and
// returns what each local rank received (MPI's Alltoallv, torch's
// all_to_all): sends[i][j] is the piece local rank i sends to rank j, and
// recvs[i][j] the piece rank j sent to local rank i, on Devices()[i].
//
// Pieces may differ in length along their first axis, and may be empty;
// every piece of every rank has one dtype (bool included) and one shape
// beyond the first axis. The pieces' lengths are exchanged first, so that
// receivers can allocate; a rank that disagrees on the dtype or the shape
// makes every rank return an error that says so. The piece a rank sends
// itself is copied.
//
// On GPUs the pieces travel through NCCL's send and receive, all issued
// in one NCCL group on each device's default stream; the lengths are read
// back to the host first, the one wait on the devices. Since it needs
// them before it sends, AllToAll cannot be called inside Group.
func (c *Comm) AllToAll(sends [][]*array.Array) (recvs [][]*array.Array, err error) {
	const fn = "AllToAll"
	if err := c.live(fn); err != nil {
		return nil, err
	}
	c.mu.Lock()
	grouping := c.grouping > 0
	c.mu.Unlock()
	if grouping {
		return nil, fmt.Errorf("dist: %s: called inside Group: it reads the pieces' lengths before it sends, which a Group defers", fn)
	}
	if len(sends) != len(c.devs) {
		return nil, fmt.Errorf("dist: %s: %d lists of pieces for %d local ranks (%s): pass one per rank", fn, len(sends), len(c.devs), names(c.devs))
	}
	var dt array.DType
	var rest []int
	for i, ps := range sends {
		if len(ps) != c.size {
			return nil, fmt.Errorf("dist: %s: local rank %d has %d pieces for %d ranks: pass one per rank (an empty array for none)", fn, i, len(ps), c.size)
		}
		for j, p := range ps {
			if p == nil {
				return nil, fmt.Errorf("dist: %s: piece %d of local rank %d is nil: %w", fn, j, i, array.ErrValue)
			}
			if err := p.Err(); err != nil {
				return nil, fmt.Errorf("dist: %s: piece %d of local rank %d: %w", fn, j, i, err)
			}
			if p.Device() != c.devs[i] {
				return nil, fmt.Errorf("dist: %s: piece %d of local rank %d is on %v, the rank on %v: %w", fn, j, i, p.Device(), c.devs[i], array.ErrDevice)
			}
			if p.Ndim() == 0 {
				return nil, fmt.Errorf("dist: %s: piece %d of local rank %d is a scalar: pieces have a first axis to split: %w", fn, j, i, array.ErrShape)
			}
			if p.Ndim() > maxRest+1 {
				return nil, fmt.Errorf("dist: %s: piece %d of local rank %d has %d axes: at most %d: %w", fn, j, i, p.Ndim(), maxRest+1, array.ErrShape)
			}
			if i == 0 && j == 0 {
				dt, rest = p.DType(), p.Shape()[1:]
				continue
			}
			if p.DType() != dt {
				return nil, fmt.Errorf("dist: %s: piece %d of local rank %d is %v, piece 0 of local rank 0 %v: %w", fn, j, i, p.DType(), dt, array.ErrDType)
			}
			if !slices.Equal(p.Shape()[1:], rest) {
				return nil, fmt.Errorf("dist: %s: piece %d of local rank %d has shape %v, piece 0 of local rank 0 %v: they must agree beyond the first axis: %w", fn, j, i, p.Shape(), sends[0][0].Shape(), array.ErrShape)
			}
		}
	}
	if dt == array.Complex64 || dt == array.Complex128 {
		return nil, fmt.Errorf("dist: %s: %v pieces: send the real and imaginary parts (ViewAsReal): %w", fn, dt, array.ErrDType)
	}
	return c.be.allToAll(sends)
}

// header is what a rank tells the others before an all-to-all: the dtype,
// the shape beyond the first axis, and the length of each piece. Ranks
// compare it so that a disagreement is an error on every rank, not a hang.
type header struct {
	dtype array.DType
	rest  []int
	lens  []int // the first-axis length of the piece for each rank
}

// maxRest bounds the axes of a piece beyond the first, so that every
// rank's header has one width whatever its pieces.
const maxRest = 15

// encode packs h into 2+maxRest+size int64s: dtype, len(rest), rest
// padded with zeros, then the lengths.
func (h header) encode() []int64 {
	out := make([]int64, 2+maxRest, 2+maxRest+len(h.lens))
	out[0], out[1] = int64(h.dtype), int64(len(h.rest))
	for i, d := range h.rest {
		out[2+i] = int64(d)
	}
	for _, n := range h.lens {
		out = append(out, int64(n))
	}
	return out
}

// headerOf is the header of pieces, one per rank (checked).
func headerOf(ps []*array.Array) header {
	h := header{dtype: ps[0].DType(), rest: ps[0].Shape()[1:]}
	for _, p := range ps {
		h.lens = append(h.lens, p.Shape()[0])
	}
	return h
}

// agree checks that the headers of every rank (one after the other, each
// of width ints) have one dtype and shape, and returns the lengths: lens[j][r]
// is the length of rank j's piece for rank r.
func agree(all []int64, size int) (lens [][]int, err error) {
	width := len(all) / size
	first := all[:width]
	for j := range size {
		h := all[j*width : (j+1)*width]
		if !slices.Equal(h[:width-size], first[:width-size]) {
			return nil, fmt.Errorf("dist: AllToAll: rank %d sends %s, rank 0 %s: %w", j, describeHeader(h, size), describeHeader(first, size), ErrPeer)
		}
		l := make([]int, size)
		for r := range size {
			l[r] = int(h[width-size+r])
		}
		lens = append(lens, l)
	}
	return lens, nil
}

func describeHeader(h []int64, size int) string {
	rest := make([]int, 0, h[1])
	for _, d := range h[2 : 2+min(max(h[1], 0), maxRest)] {
		rest = append(rest, int(d))
	}
	return fmt.Sprintf("%v pieces of shape %s", array.DType(h[0]), pieceShape(rest))
}

// pieceShape writes the shape of pieces as "[n 3 4]".
func pieceShape(rest []int) string {
	s := "[n"
	for _, d := range rest {
		s += fmt.Sprintf(" %d", d)
	}
	return s + "]"
}

// hostLocal: every rank is here, so a piece is copied to its receiver.
func (h *hostLocal) allToAll(sends [][]*array.Array) ([][]*array.Array, error) {
	recvs := make([][]*array.Array, len(sends))
	for i := range sends {
		recvs[i] = make([]*array.Array, len(sends))
		for j := range sends {
			p := sends[j][i]
			if p.Device() != h.devs[i] {
				p = p.To(h.devs[i])
			}
			r := p.Copy()
			if err := r.Err(); err != nil {
				return nil, fmt.Errorf("dist: AllToAll: from rank %d to rank %d: %w", j, i, err)
			}
			recvs[i][j] = r
		}
	}
	return recvs, nil
}

// allToAll on NCCL: the headers go round in an AllGather, then every piece
// in one group of sends and receives.
func (b *ncclBackend) allToAll(sends [][]*array.Array) ([][]*array.Array, error) {
	size := len(sends[0])
	hs := make([]*array.Array, len(b.devs))
	all := make([]*array.Array, len(b.devs))
	for i, d := range b.devs {
		hs[i] = array.FromSliceOn(d, headerOf(sends[i]).encode())
		all[i] = array.On(d).Empty(array.Int64, size*hs[i].Size())
		if err := all[i].Err(); err != nil {
			return nil, err
		}
	}
	if err := b.allGather(hs, all); err != nil {
		return nil, fmt.Errorf("dist: AllToAll: the lengths: %w", err)
	}
	flat, err := all[0].Int64s()
	if err != nil {
		return nil, fmt.Errorf("dist: AllToAll: the lengths: %w", err)
	}
	lens, err := agree(flat, size)
	if err != nil {
		return nil, err
	}
	x := sends[0][0]
	dt := x.DType()
	nt := nccl.Uint8 // bools travel as bytes
	if dt != array.Bool {
		if nt, err = ncclType(dt); err != nil {
			return nil, fmt.Errorf("dist: AllToAll: %w", err)
		}
	}
	rest := x.Shape()[1:]
	row := 1
	for _, d := range rest {
		row *= d
	}
	recvs := make([][]*array.Array, len(b.devs))
	var keep []*array.Array
	type xfer struct {
		send bool
		i, j int // local rank, peer
		n    int // elements
		x    *array.Array
	}
	var xs []xfer
	for i, d := range b.devs {
		me := b.comms[i].Rank()
		m := array.On(d)
		recvs[i] = make([]*array.Array, size)
		for j := range size {
			if j == me {
				recvs[i][j] = sends[i][j].Copy()
				continue
			}
			recvs[i][j] = m.Empty(dt, append([]int{lens[j][me]}, rest...)...)
			if n := lens[j][me] * row; n > 0 {
				xs = append(xs, xfer{false, i, j, n, recvs[i][j]})
			}
			if n := sends[i][j].Size(); n > 0 {
				s := sends[i][j].Contiguous()
				xs = append(xs, xfer{true, i, j, n, s})
			}
		}
		for j := range size {
			if err := recvs[i][j].Err(); err != nil {
				return nil, fmt.Errorf("dist: AllToAll: %w", err)
			}
		}
	}
	arrs := make([]*array.Array, len(xs))
	for k, t := range xs {
		arrs[k] = t.x
		keep = append(keep, t.x)
	}
	ms, err := memories(arrs)
	if err != nil {
		return nil, fmt.Errorf("dist: AllToAll: %w", err)
	}
	what := func() string { return fmt.Sprintf("AllToAll of %v %s", dt, pieceShape(rest)) }
	err = b.issue(keep, what, nil, func() error {
		for k, t := range xs {
			s := b.devs[t.i].Stream().CUDA()
			var err error
			if t.send {
				err = b.comms[t.i].Send(ms[k], t.n, nt, t.j, s)
			} else {
				err = b.comms[t.i].Recv(ms[k], t.n, nt, t.j, s)
			}
			if err != nil {
				return fmt.Errorf("dist: AllToAll: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recvs, nil
}
