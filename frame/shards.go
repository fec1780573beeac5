package frame

import (
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
)

// Shards is a frame split by rows across the ranks of a dist.Comm: one
// Frame per rank, on the rank's device, all with the same columns. Its
// rows are those of rank 0's frame, then rank 1's, and so on: the order
// Gather returns them in, which First and Last follow.
//
// Group-by and join move rows between ranks by hash partitioning (see
// Partition), through Comm.AllToAll: NCCL's send and receive on GPUs, host
// copies on the CPU stand-in. Every rank of the Comm must be in this
// process (a Comm from dist.New): the ranks' frames are driven together.
type Shards struct {
	comm  *dist.Comm
	parts []*Frame
}

// NewShards returns the frames as the shards of c, parts[r] rank r's, on
// c.Devices()[r]. The frames must have the same column names in the same
// order, of the same kinds and dtypes (categoricals' dictionaries may
// differ).
func NewShards(c *dist.Comm, parts ...*Frame) (*Shards, error) {
	const op = "NewShards"
	if err := checkComm(op, c); err != nil {
		return nil, err
	}
	devs := c.Devices()
	if len(parts) != len(devs) {
		return nil, errorf(op, ErrValue, "%d frames for %d ranks: pass one per rank", len(parts), len(devs))
	}
	for r, f := range parts {
		if f == nil {
			return nil, errorf(op, ErrValue, "frame %d is nil", r)
		}
		if f.dev != devs[r] {
			return nil, errorf(op, ErrValue, "frame %d is on %v, rank %d on %v", r, f.dev, r, devs[r])
		}
		if err := sameSchema(op, parts[0], f, r); err != nil {
			return nil, err
		}
	}
	return &Shards{comm: c, parts: slices.Clone(parts)}, nil
}

// ranks runs fn for every rank at once, each in its goroutine: a rank's
// device works while another's goroutine waits on its own. It returns
// the error of the first rank that failed.
func ranks(n int, fn func(r int) error) error {
	if n == 1 {
		return fn(0)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { errs[r] = fn(r) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkComm refuses a nil Comm and one with ranks in other processes.
func checkComm(op string, c *dist.Comm) error {
	if c == nil {
		return errorf(op, ErrValue, "nil *dist.Comm")
	}
	if n := len(c.Devices()); n != c.Size() {
		return errorf(op, ErrValue, "%v drives %d of its %d ranks here: Shards need every rank in this process (dist.New)", c, n, c.Size())
	}
	return nil
}

// sameSchema checks that g (frame r) has f's columns.
func sameSchema(op string, f, g *Frame, r int) error {
	if len(g.cols) != len(f.cols) {
		return errorf(op, ErrColumn, "frame %d has %d columns (%s), frame 0 %d (%s)", r, len(g.cols), quoteList(g.Names(), 8), len(f.cols), quoteList(f.Names(), 8))
	}
	for i, c := range f.cols {
		d := g.cols[i]
		if d.name != c.name {
			return errorf(op, ErrColumn, "column %d of frame %d is %q, of frame 0 %q", i, r, d.name, c.name)
		}
		if d.kind != c.kind || d.DType() != c.DType() {
			return errorf(op, ErrType, "column %q is %s in frame %d and %s in frame 0", c.name, typeName(d), r, typeName(c))
		}
	}
	return nil
}

// Scatter splits f by rows across the ranks of c: rank r gets the rows
// dist.Split(f.Len(), c.Size(), r) says, copied to its device.
func Scatter(c *dist.Comm, f *Frame) (*Shards, error) {
	const op = "Scatter"
	if err := checkComm(op, c); err != nil {
		return nil, err
	}
	if f == nil {
		return nil, errorf(op, ErrValue, "nil frame")
	}
	devs := c.Devices()
	parts := make([]*Frame, len(devs))
	err := ranks(len(devs), func(r int) error {
		lo, hi := dist.Split(f.n, len(devs), r)
		var err error
		parts[r], err = frameTo(op, f.Slice(lo, hi), devs[r])
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Shards{comm: c, parts: parts}, nil
}

// frameTo returns f on dev (f itself when it is there).
func frameTo(op string, f *Frame, dev *gocu.Device) (*Frame, error) {
	if f.dev == dev {
		return f, nil
	}
	g := &Frame{dev: dev, n: f.n, cols: make([]*Series, len(f.cols))}
	for i, s := range f.cols {
		c := *s
		c.dev, c.codes = dev, &codesCache{}
		if s.data != nil {
			c.data = s.data.To(dev)
			if err := c.data.Err(); err != nil {
				return nil, wrapErr(op, ErrValue, err, "column %q to %v", s.name, dev)
			}
		}
		if s.valid != nil {
			c.valid = s.valid.To(dev)
		}
		g.cols[i] = &c
	}
	return g, nil
}

// Comm returns the communicator of the shards' ranks.
func (s *Shards) Comm() *dist.Comm { return s.comm }

// Parts returns the ranks' frames, rank 0's first.
func (s *Shards) Parts() []*Frame { return slices.Clone(s.parts) }

// Len returns the number of rows of all ranks.
func (s *Shards) Len() int {
	n := 0
	for _, f := range s.parts {
		n += f.n
	}
	return n
}

// Names returns the column names.
func (s *Shards) Names() []string { return s.parts[0].Names() }

// Gather returns the rows of every rank in one frame on rank 0's device,
// rank 0's rows first. Categoricals get one dictionary, as Concat does.
func (s *Shards) Gather() (*Frame, error) {
	const op = "Gather"
	dev := s.parts[0].dev
	fs := make([]*Frame, len(s.parts))
	err := ranks(len(fs), func(r int) error {
		var err error
		fs[r], err = frameTo(op, s.parts[r], dev)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(fs) == 1 {
		return fs[0], nil
	}
	return Concat(fs...)
}

// Partition returns the rows moved so that rows with equal keys are on
// one rank: rank hash(keys) mod Size(). Every rank hashes a key alike:
// numbers by value (-0 as +0), strings and categoricals by their bytes;
// null and NaN keys hash alike. A rank's rows come from rank 0 first, then
// rank 1, each in their order.
func (s *Shards) Partition(keys ...string) (*Shards, error) {
	const op = "Partition"
	if len(keys) == 0 {
		return nil, errorf(op, ErrValue, "no key columns")
	}
	float, err := floatKeys(op, s.parts[0], nil, keys)
	if err != nil {
		return nil, err
	}
	return s.partition(op, keys, float)
}

// floatKeys says which keys hash as float64: float keys, and numbers
// joined with floats, so that 3 meets 3.0 (other nil: no join).
func floatKeys(op string, f, other *Frame, keys []string) ([]bool, error) {
	out := make([]bool, len(keys))
	for i, k := range keys {
		c, err := f.col(op, k)
		if err != nil {
			return nil, err
		}
		out[i] = c.kind == Number && c.DType().IsFloating()
		if other != nil {
			d, err := other.col(op, k)
			if err != nil {
				return nil, err
			}
			if c.kind == Number && d.kind == Number && (out[i] || d.DType().IsFloating()) {
				out[i] = true
			}
		}
	}
	return out, nil
}

func (s *Shards) partition(op string, keys []string, float []bool) (*Shards, error) {
	size := s.comm.Size()
	dest := make([]*array.Array, len(s.parts))
	err := ranks(size, func(r int) error {
		h, err := hashRows(op, s.parts[r], keys, float)
		if err != nil {
			return err
		}
		dest[r] = h.BitwiseAnd(int64(math.MaxInt64)).Mod(int64(size))
		return dest[r].Err()
	})
	if err != nil {
		return nil, err
	}
	parts, err := s.exchange(op, dest)
	if err != nil {
		return nil, err
	}
	return &Shards{comm: s.comm, parts: parts}, nil
}

// The mixing constants of splitmix64's finaliser, top bits cleared:
// array takes integer scalars in int64's range. The hashes are int64
// (array computes uint64 in int64 too), shifted arithmetically.
const (
	mix1 = 0x3f58476d1ce4e5b9
	mix2 = 0x14d049bb133111eb
)

// mix scrambles the bits of an int64 array (splitmix64's finaliser).
func mix(z *array.Array) *array.Array {
	z = z.BitwiseXor(z.RightShift(int64(30))).Mul(int64(mix1))
	z = z.BitwiseXor(z.RightShift(int64(27))).Mul(int64(mix2))
	return z.BitwiseXor(z.RightShift(int64(31)))
}

// fnv1a is the 64-bit FNV-1a hash of b: the same on every rank and in
// every run, so that partitions are reproducible.
func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// hashRows returns an int64 hash of each row's keys, on f's device.
func hashRows(op string, f *Frame, keys []string, float []bool) (*array.Array, error) {
	var acc *array.Array
	for i, k := range keys {
		c, err := f.col(op, k)
		if err != nil {
			return nil, err
		}
		h, err := hashColumn(op, c, float[i])
		if err != nil {
			return nil, err
		}
		if acc == nil {
			acc = h
		} else {
			acc = mix(acc.Mul(int64(mix1)).BitwiseXor(h))
		}
	}
	return acc, acc.Err()
}

// hashColumn returns an int64 hash of each value, 0 for nulls and NaN.
func hashColumn(op string, s *Series, float bool) (*array.Array, error) {
	var h, null *array.Array
	if s.valid != nil {
		null = s.valid.LogicalNot()
	}
	switch s.kind {
	case String:
		hs := make([]int64, s.n)
		hostChunks(s.n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				hs[i] = int64(fnv1a(s.bytes[s.offs[i]:s.offs[i+1]]))
			}
		})
		h = array.FromSliceOn(s.dev, hs)
	case Categorical:
		hs := make([]int64, max(len(s.dict), 1))
		for i, w := range s.dict {
			hs[i] = int64(fnv1a([]byte(w)))
		}
		codes := s.data.AsType(array.Int64)
		if null != nil {
			codes = array.Where(null, 0, codes) // a null's code is unspecified
		}
		h = array.FromSliceOn(s.dev, hs).Take(codes, 0)
	default:
		x := s.data
		if x.DType() == array.Bool {
			x = x.AsType(array.Int8)
		}
		if float || x.DType().IsFloating() {
			y := x.AsType(array.Float64).Add(0.0) // -0 + 0 is +0
			nan := y.IsNaN()
			if null != nil {
				null = null.LogicalOr(nan)
			} else {
				null = nan
			}
			// The integer part and 52 bits of the fraction: equal values
			// hash alike without reading their bits.
			y = array.Where(nan, 0.0, y).Clip(-9e18, 9e18)
			whole := y.Floor()
			frac := y.Sub(whole).Mul(float64(1 << 52))
			h = mix(whole.AsType(array.Int64)).BitwiseXor(frac.AsType(array.Int64))
		} else {
			h = x.AsType(array.Int64)
		}
	}
	h = mix(h)
	if null != nil {
		h = array.Where(null, int64(0), h)
	}
	if err := h.Err(); err != nil {
		return nil, wrapErr(op, ErrValue, err, "hashing column %q", s.name)
	}
	return h, nil
}

// exchange sends row i of rank r's frame to rank dest[r][i] (int64
// arrays) and returns each rank's rows: those from rank 0 first, then
// rank 1's, each source's in its order.
func (s *Shards) exchange(op string, dest []*array.Array) ([]*Frame, error) {
	size := len(s.parts)
	sorted := make([]*Frame, size)
	counts := make([][]int64, size)
	err := ranks(size, func(r int) error {
		f, d := s.parts[r], dest[r]
		if f.n == 0 {
			sorted[r], counts[r] = f, make([]int64, size)
			return nil
		}
		// Each destination's rows in order, one compaction per rank:
		// cheaper than sorting by destination for a handful of ranks.
		idx := make([]*array.Array, size)
		counts[r] = make([]int64, size)
		for j := range size {
			idx[j] = d.Eq(int64(j)).FlatNonzero()
			counts[r][j] = int64(idx[j].Size())
		}
		order := idx[0]
		if size > 1 {
			order = array.Concat(0, idx...)
		}
		var err error
		sorted[r], err = f.Take(order)
		return err
	})
	if err != nil {
		return nil, err
	}
	if size == 1 {
		return sorted, nil
	}
	// piece returns rank r's rows for rank j.
	piece := func(r, j int) (lo, hi int) {
		for k := range j {
			lo += int(counts[r][k])
		}
		return lo, lo + int(counts[r][j])
	}
	devs := s.comm.Devices()
	width := len(s.parts[0].cols)
	out := make([][]*Series, size)
	for c := range width {
		cols := make([]*Series, size)
		for r, f := range sorted {
			cols[r] = f.cols[c]
		}
		if cols[0].kind == Categorical {
			cols = unifyDicts(cols)
		}
		recv, err := s.exchangeColumn(op, cols, piece, devs)
		if err != nil {
			return nil, err
		}
		for r := range size {
			out[r] = append(out[r], recv[r])
		}
	}
	parts := make([]*Frame, size)
	for r := range size {
		f, err := New(devs[r], out[r]...)
		if err != nil {
			return nil, err
		}
		parts[r] = f
	}
	return parts, nil
}

// unifyDicts re-encodes categoricals in the sorted union of their
// dictionaries, so that a code means one string on every rank.
func unifyDicts(cols []*Series) []*Series {
	var dict []string
	for _, c := range cols {
		dict = append(dict, c.dict...)
	}
	sort.Strings(dict)
	dict = slices.Compact(dict)
	out := make([]*Series, len(cols))
	for r, c := range cols {
		d := *c
		d.dict, d.codes = dict, &codesCache{}
		if len(c.dict) > 0 && !slices.Equal(c.dict, dict) {
			remap := make([]int32, len(c.dict))
			for i, w := range c.dict {
				k, _ := slices.BinarySearch(dict, w)
				remap[i] = int32(k)
			}
			d.data = array.FromSliceOn(c.dev, remap).Take(c.data, 0)
		}
		out[r] = &d
	}
	return out
}

// exchangeColumn sends the pieces of one column (cols[r] rank r's, its
// rows sorted by destination) and returns each rank's column.
func (s *Shards) exchangeColumn(op string, cols []*Series, piece func(r, j int) (int, int), devs []*gocu.Device) ([]*Series, error) {
	size := len(cols)
	c0 := cols[0]
	send := func(arr func(r int) *array.Array) ([][]*array.Array, error) {
		sends := make([][]*array.Array, size)
		for r := range size {
			a := arr(r)
			for j := range size {
				lo, hi := piece(r, j)
				sends[r] = append(sends[r], a.Slice(array.S(lo, hi)))
			}
		}
		recvs, err := s.comm.AllToAll(sends)
		if err != nil {
			return nil, wrapErr(op, ErrValue, err, "moving column %q", c0.name)
		}
		return recvs, nil
	}
	concat := func(ps []*array.Array) *array.Array {
		if len(ps) == 1 {
			return ps[0]
		}
		return array.Concat(0, ps...)
	}
	out := make([]*Series, size)
	for r := range size {
		out[r] = &Series{name: c0.name, kind: c0.kind, dev: devs[r], dict: c0.dict, codes: &codesCache{}}
	}
	anyNull := false
	for _, c := range cols {
		anyNull = anyNull || c.valid != nil
	}
	if anyNull {
		recvs, err := send(func(r int) *array.Array {
			if v := cols[r].valid; v != nil {
				return v
			}
			return array.On(devs[r]).Full(array.Bool, true, cols[r].n)
		})
		if err != nil {
			return nil, err
		}
		for r := range size {
			out[r].valid = concat(recvs[r])
		}
	}
	if c0.kind != String {
		recvs, err := send(func(r int) *array.Array { return cols[r].data })
		if err != nil {
			return nil, err
		}
		for r := range size {
			out[r].data = concat(recvs[r])
			out[r].n = out[r].data.Size()
			if err := out[r].data.Err(); err != nil {
				return nil, wrapErr(op, ErrValue, err, "column %q", c0.name)
			}
		}
		return out, nil
	}
	// Strings: the lengths, then the bytes, whose pieces span the rows'.
	recvs, err := send(func(r int) *array.Array {
		c := cols[r]
		lens := make([]int64, c.n)
		for i := range lens {
			lens[i] = c.offs[i+1] - c.offs[i]
		}
		return array.FromSliceOn(devs[r], lens)
	})
	if err != nil {
		return nil, err
	}
	sends := make([][]*array.Array, size)
	for r, c := range cols {
		for j := range size {
			lo, hi := piece(r, j)
			sends[r] = append(sends[r], array.FromSliceOn(devs[r], c.bytes[c.offs[lo]:c.offs[hi]]))
		}
	}
	brecvs, err := s.comm.AllToAll(sends)
	if err != nil {
		return nil, wrapErr(op, ErrValue, err, "moving column %q", c0.name)
	}
	for r := range size {
		lens, err := concat(recvs[r]).Int64s()
		if err != nil {
			return nil, wrapErr(op, ErrValue, err, "column %q", c0.name)
		}
		var b []byte
		for _, p := range brecvs[r] {
			v, err := p.Uint8s()
			if err != nil {
				return nil, wrapErr(op, ErrValue, err, "column %q", c0.name)
			}
			b = append(b, v...)
		}
		offs := make([]int64, len(lens)+1)
		for i, l := range lens {
			offs[i+1] = offs[i] + l
		}
		out[r].n, out[r].offs, out[r].bytes = len(lens), offs, b
	}
	return out, nil
}
