package gpu

import (
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cuda"
)

// ixState is the device-side error flag of the indexing kernels: four
// int64 words (flag, index, axis, length), zero until a kernel finds an
// index out of range. armed says a kernel that may set it has been
// queued since the last check.
type ixState struct {
	once  sync.Once
	words *Buffer
	err   error
	armed atomic.Bool
}

// ixWords returns the error words, allocated and zeroed on first use.
func (b *Backend) ixWords() (*Buffer, error) {
	b.ix.once.Do(func() {
		mem, err := b.dev.AllocOn(b.stream, 32)
		if err == nil {
			err = mem.MemsetD32Async(0, b.stream)
		}
		if err != nil {
			b.ix.err = b.note(err)
			return
		}
		b.ix.words = &Buffer{mem: mem, ptr: uint64(mem.Ptr()), dt: backend.Int64, n: 4, be: b, external: true}
	})
	return b.ix.words, b.ix.err
}

// ixCheck reads the error words after a synchronisation, if an indexing
// kernel ran since the last check, and clears them: an index out of range
// is reported once, as a *backend.IndexError.
func (b *Backend) ixCheck() error {
	if b.capturing() || !b.ix.armed.Swap(false) {
		return nil
	}
	w := b.ix.words
	var v [4]int64
	if err := cuda.CopyDtoHAsync(v[:], w.mem, b.stream); err != nil {
		return b.note(err)
	}
	if err := b.stream.Synchronize(); err != nil {
		return b.note(err)
	}
	if v[0] == 0 {
		return nil
	}
	if err := w.mem.MemsetD32Async(0, b.stream); err != nil {
		return b.note(err)
	}
	return &backend.IndexError{Index: v[1], Axis: int(v[2]), Len: int(v[3])}
}

// ixKey appends what an indexing plan depends on beyond its buffers'
// addresses: dtypes, alignment and aliasing of the buffers, and every
// size, stride and offset.
func ixKey(k []byte, kind byte, bufs []*Buffer, offs []int, ints ...int) []byte {
	k = append(k, kind)
	for i, g := range bufs {
		k = append(k, byte(g.dt), align(g, offs[i]))
	}
	for _, v := range ints {
		k = appendInt(k, v)
	}
	for _, v := range offs {
		k = appendInt(k, v)
	}
	return appendAliases(k, bufs)
}

func ixInts(ints []int, idx []backend.Index) []int {
	for _, x := range idx {
		ints = append(ints, x.Len, x.Axis, x.Strides[0], x.Strides[1], x.Strides[2])
	}
	return ints
}

// Gather implements backend.Indexer.
func (b *Backend) Gather(r *backend.Gather) error {
	if err := b.failed(); err != nil {
		return err
	}
	words, err := b.ixWords()
	if err != nil {
		return err
	}
	extra := []backend.Buffer{r.Out, r.Src}
	offs := []int{r.OutOffset, r.SrcOffset}
	for _, x := range r.Idx {
		extra = append(extra, x.Buf)
		offs = append(offs, x.Offset)
	}
	extra = append(extra, words)
	offs = append(offs, 0)
	var arr [8]*Buffer
	bufs, err := b.operands(arr[:0], nil, extra...)
	if err != nil {
		return err
	}
	var ka [keySize]byte
	k := ixKey(ka[:0], 'g', bufs, offs, ixInts([]int{r.O, r.M, r.I}, r.Idx)...)
	c := call{bufs: bufs}
	_, err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanGather(r, words, b.options()) })
	if err == nil {
		b.ix.armed.Store(true)
	}
	return err
}

// Scatter implements backend.Indexer: atomics for Add and Max, so
// duplicate indices accumulate; with Set one of the duplicates wins.
func (b *Backend) Scatter(r *backend.Scatter) error {
	if err := b.failed(); err != nil {
		return err
	}
	words, err := b.ixWords()
	if err != nil {
		return err
	}
	extra := []backend.Buffer{r.Dst, r.Val}
	offs := []int{r.DstOffset, r.ValOffset}
	for _, x := range r.Idx {
		extra = append(extra, x.Buf)
		offs = append(offs, x.Offset)
	}
	extra = append(extra, words)
	offs = append(offs, 0)
	var arr [8]*Buffer
	bufs, err := b.operands(arr[:0], nil, extra...)
	if err != nil {
		return err
	}
	var ka [keySize]byte
	k := ixKey(ka[:0], 's', bufs, offs, ixInts([]int{int(r.Op), r.O, r.M, r.I, r.ValStrides[0], r.ValStrides[1], r.ValStrides[2]}, r.Idx)...)
	c := call{bufs: bufs}
	_, err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanScatter(r, words, b.options()) })
	if err == nil {
		b.ix.armed.Store(true)
	}
	return err
}

// Nonzero implements backend.Indexer: per-tile counts, a scan of them and
// an ordered write, three kernels and no synchronisation.
func (b *Backend) Nonzero(r *backend.Nonzero) error {
	if err := b.failed(); err != nil {
		return err
	}
	var arr [3]*Buffer
	bufs, err := b.operands(arr[:0], nil, r.Mask, r.Out, r.Count)
	if err != nil {
		return err
	}
	offs := []int{r.MaskOffset, r.OutOffset, r.CountOffset}
	var ka [keySize]byte
	k := ixKey(ka[:0], 'z', bufs, offs, r.N, r.Cap)
	c := call{bufs: bufs}
	_, err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanNonzero(r, b.options()) })
	return err
}
