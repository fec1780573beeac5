package frame

import (
	"math"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// Hash-based grouping and joining, as libcudf does: integer keys too
// wide to index directly go into an open-addressing table (in device
// memory on a GPU, in Go on all cores on the CPU) instead of being ranked
// by a sort; the table's distinct keys, few beside the rows, are then
// sorted so that codes order as the keys. Joins hash on a GPU whatever
// the keys' range. On a GPU, groups of a small code space reduce in
// shared memory (see hash_cuda.go).
// GOCU_FRAME_HASH=0 turns the tables and the shared-memory reductions off
// (the sort-based paths and array's global atomics); GOCU_FRAME_HASH=1
// makes the CPU's joins use the table for narrow keys too, as the GPU's
// do.

// hashMode returns GOCU_FRAME_HASH: 0 off, 1 forced, -1 the default.
func hashMode() int {
	switch os.Getenv("GOCU_FRAME_HASH") {
	case "0":
		return 0
	case "1":
		return 1
	}
	return -1
}

// useHash reports whether grouping and joining on dev use hash tables
// for keys too wide to index directly (where the alternative is a sort):
// yes, unless GOCU_FRAME_HASH=0.
func useHash(dev *gocu.Device) bool { return hashMode() != 0 }

// hashNarrow reports whether joins on dev use a hash table also for keys
// narrow enough to index directly: on a GPU, or when forced.
func hashNarrow(dev *gocu.Device) bool {
	m := hashMode()
	return m == 1 || m == -1 && dev.IsGPU()
}

// useGroupKernels reports whether the shared-memory group reductions run
// on dev: on a GPU, unless GOCU_FRAME_HASH=0.
func useGroupKernels(dev *gocu.Device) bool { return dev.IsGPU() && hashMode() != 0 }

// maxSmallGroups is the most groups reduced in shared memory: 32 KiB of
// int64 or float64 accumulators per block.
const maxSmallGroups = 4096

// tableSize is the slots of a table for n keys: a power of two at least
// twice n, so that probes stay short.
func tableSize(n int) int {
	return 1 << bits.Len(uint(max(2*n, 1024)-1))
}

// emptyKey returns a key outside [lo, hi] to mark empty slots, or false
// when the keys span every int64.
func emptyKey(lo, hi int64) (int64, bool) {
	switch {
	case lo > math.MinInt64:
		return lo - 1, true
	case hi < math.MaxInt64:
		return hi + 1, true
	}
	return 0, false
}

// table is a hash table of int64 keys on a device.
type table struct {
	dev   *gocu.Device
	slots *array.Array // int64 keys, empty where unused
	empty int64
}

// intKeys returns keys as int32 or int64, which the table kernels read.
func intKeys(keys *array.Array) *array.Array {
	if dt := keys.DType(); dt != array.Int32 && dt != array.Int64 {
		return keys.AsType(array.Int64)
	}
	return keys
}

// newTable puts keys (integers, none equal to empty) in a table of
// tableSize(size) slots and returns it with the slot of every key.
func newTable(keys *array.Array, size int, empty int64) (*table, *array.Array, error) {
	keys = intKeys(keys)
	dev := keys.Device()
	m := array.On(dev)
	n := keys.Size()
	cap := tableSize(size)
	t := &table{dev: dev, empty: empty}
	if !dev.IsGPU() {
		k, err := keys.AsType(array.Int64).Int64s()
		if err != nil {
			return nil, nil, err
		}
		slots, slot := hostInsert(k, cap, empty)
		t.slots = array.FromSliceOn(dev, slots)
		return t, array.FromSliceOn(dev, slot), nil
	}
	ks, err := hashModule(dev, array.Int64, keys.DType())
	if err != nil {
		return nil, nil, err
	}
	t.slots = m.Full(array.Int64, empty, cap)
	slot := m.Empty(array.Int64, n)
	if n > 0 {
		if err := ks.insert.Launch(gridStride(n), keys.Contiguous(), int64(n), t.slots, int64(cap-1), empty, slot); err != nil {
			return nil, nil, err
		}
	}
	return t, slot, nil
}

// find returns the slot of each of keys (int64), -1 where the table lacks
// the key.
func (t *table) find(keys *array.Array) (*array.Array, error) {
	keys = intKeys(keys)
	n := keys.Size()
	cap := t.slots.Size()
	if !t.dev.IsGPU() {
		k, err := keys.AsType(array.Int64).Int64s()
		if err != nil {
			return nil, err
		}
		s, err := t.slots.Int64s()
		if err != nil {
			return nil, err
		}
		return array.FromSliceOn(t.dev, hostFind(k, s, t.empty)), nil
	}
	ks, err := hashModule(t.dev, array.Int64, keys.DType())
	if err != nil {
		return nil, err
	}
	slot := array.On(t.dev).Empty(array.Int64, n)
	if n > 0 {
		if err := ks.find.Launch(gridStride(n), keys.Contiguous(), int64(n), t.slots, int64(cap-1), t.empty, slot); err != nil {
			return nil, err
		}
	}
	return slot, nil
}

// ranks returns, for each slot, the rank of its key among the table's
// distinct keys (0 for empty slots), and the number of distinct keys. It
// sorts only the distinct keys.
func (t *table) ranks() (*array.Array, int, error) {
	m := array.On(t.dev)
	used := t.slots.Ne(t.empty).FlatNonzero()
	d := used.Size()
	order := t.slots.Take(used, 0).Argsort(0)
	rank := m.Zeros(array.Int64, t.slots.Size())
	if d > 0 {
		rank = rank.IndexAdd(0, used.Take(order, 0), m.Arange(array.Int64, 0, float64(d)))
	}
	return rank, d, rank.Err()
}

// denseRanks returns, for each slot, its rank among the used slots (in
// slot order, not key order: no sort), and the number of keys.
func (t *table) denseRanks() (*array.Array, int, error) {
	cum := t.slots.Ne(t.empty).AsType(array.Int64).Cumsum(0)
	d, err := array.ItemOf[int64](cum.Slice(array.Idx(cum.Size() - 1)))
	if err != nil {
		return nil, 0, err
	}
	return cum.Sub(1), int(d), nil
}

// hashCodes returns codes in [0, d) of the integer keys k whose values lie
// in [lo, hi], ordered as the keys, and d, the number of distinct keys;
// ok is false when no key can mark empty slots.
func hashCodes(k *array.Array, lo, hi int64) (codes *array.Array, d int, ok bool, err error) {
	empty, ok := emptyKey(lo, hi)
	if !ok {
		return nil, 0, false, nil
	}
	t, slot, err := newTable(k, k.Size(), empty)
	if err != nil {
		return nil, 0, true, err
	}
	rank, d, err := t.ranks()
	if err != nil {
		return nil, 0, true, err
	}
	codes = rank.Take(slot, 0)
	return codes, d, true, codes.Err()
}

func hostHash(k int64, mask int) int {
	u := uint64(k)
	u ^= u >> 33
	u *= 0xff51afd7ed558ccd
	u ^= u >> 33
	u *= 0xc4ceb9fe1a85ec53
	u ^= u >> 33
	return int(u & uint64(mask))
}

// hostChunks runs fn over [0, n) in pieces on all cores.
func hostChunks(n int, fn func(lo, hi int)) {
	const least = 1 << 14
	w := min(runtime.GOMAXPROCS(0), (n+least-1)/least)
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range w {
		wg.Go(func() { fn(p*n/w, (p+1)*n/w) })
	}
	wg.Wait()
}

// hostInsert is gocu_hash_insert on the host, on all cores.
func hostInsert(keys []int64, cap int, empty int64) (slots, slot []int64) {
	slots = make([]int64, cap)
	hostChunks(cap, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			slots[i] = empty
		}
	})
	slot = make([]int64, len(keys))
	mask := cap - 1
	hostChunks(len(keys), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k := keys[i]
			h := hostHash(k, mask)
			for {
				cur := atomic.LoadInt64(&slots[h])
				if cur == k {
					break
				}
				if cur == empty && (atomic.CompareAndSwapInt64(&slots[h], empty, k) || atomic.LoadInt64(&slots[h]) == k) {
					break
				}
				h = (h + 1) & mask
			}
			slot[i] = int64(h)
		}
	})
	return slots, slot
}

// hostFind is gocu_hash_find on the host, on all cores.
func hostFind(keys, slots []int64, empty int64) []int64 {
	slot := make([]int64, len(keys))
	mask := len(slots) - 1
	hostChunks(len(keys), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k := keys[i]
			slot[i] = -1
			if k == empty {
				continue
			}
			for h := hostHash(k, mask); slots[h] != empty; h = (h + 1) & mask {
				if slots[h] == k {
					slot[i] = int64(h)
					break
				}
			}
		}
	})
	return slot
}

// groupKernels returns the group kernels for values of dt and keys of
// dtype key when g groups reduce in shared memory on dev, or nil.
func groupKernels(dev *gocu.Device, g int, dt, key array.DType) *hashKernels {
	if g == 0 || g > maxSmallGroups || !kernelDType(dt) || !useGroupKernels(dev) {
		return nil
	}
	ks, err := hashModule(dev, dt, key)
	if err != nil {
		return nil // the composed operations report nothing and work
	}
	return ks
}

// gkey is the group of each row as the kernels read it: a-lo, a of
// dtype int32 or int64. A key column of small range is read in place.
type gkey struct {
	a  *array.Array
	lo int64
}

// codeKey is the gkey of int64 group numbers.
func codeKey(id *array.Array) gkey { return gkey{a: id} }

func (k gkey) dtype() array.DType {
	if k.a != nil && k.a.DType() == array.Int32 {
		return array.Int32
	}
	return array.Int64
}

// arg is a as a kernel argument.
func (k gkey) arg() *array.Array {
	if k.a.DType() != k.dtype() {
		return k.a.AsType(array.Int64).Contiguous()
	}
	return k.a.Contiguous()
}

// okArg is the Bool mask ok as a kernel argument, and whether there is
// one.
func okArg(dev *gocu.Device, ok *array.Array) (*array.Array, int32) {
	if ok == nil {
		return array.On(dev).Full(array.Bool, true, 1), 0
	}
	return ok.Contiguous(), 1
}

// countGroups counts the rows of each of g groups (where ok, unless nil);
// id is the int64 group of each row, k the same for the kernels.
func countGroups(id *array.Array, k gkey, ok *array.Array, g int) *array.Array {
	dev, n := id.Device(), id.Size()
	m := array.On(dev)
	if ks := groupKernels(dev, g, array.Int64, k.dtype()); ks != nil {
		out := m.Zeros(array.Int64, g)
		o, has := okArg(dev, ok)
		if err := ks.count.Launch(groupLaunch(n, g, 8), k.arg(), k.lo, o, has, int64(n), out, int32(g)); err != nil {
			return array.Failed(err)
		}
		return out
	}
	var src any = int64(1)
	if ok != nil {
		src = ok.AsType(array.Int64)
	}
	return m.Zeros(array.Int64, g).IndexAdd(0, id, src)
}

// firstRows returns the first row of each of g groups, n for a group
// without rows.
func firstRows(id *array.Array, k gkey, g int) *array.Array {
	dev, n := id.Device(), id.Size()
	m := array.On(dev)
	if ks := groupKernels(dev, g, array.Int64, k.dtype()); ks != nil {
		out := m.Full(array.Int64, int64(n), g)
		if err := ks.first.Launch(groupLaunch(n, g, 8), k.arg(), k.lo, int64(n), out, int32(g)); err != nil {
			return array.Failed(err)
		}
		return out
	}
	pos := m.Arange(array.Int64, 0, float64(n))
	return m.Full(array.Int64, -int64(n), g).ScatterMax(0, id, pos.Neg()).Neg()
}

// sum adds x (where ok, unless nil) per group, in acc (Int64 or Float64).
func (gr *groups) sum(x, ok *array.Array, acc array.DType) *array.Array {
	if ks := groupKernels(gr.f.dev, gr.n, x.DType(), gr.key.dtype()); ks != nil && accType(x.DType()) == acc {
		out := gr.zeros(acc)
		o, has := okArg(gr.f.dev, ok)
		n := x.Size()
		if err := ks.sum.Launch(groupLaunch(n, gr.n, 8), gr.key.arg(), gr.key.lo, x.Contiguous(), o, has, int64(n), out, int32(gr.n)); err != nil {
			return array.Failed(err)
		}
		return out
	}
	return gr.zeros(acc).IndexAdd(0, gr.id, masked(x.AsType(acc), ok, 0))
}

// extreme returns the largest (most) or smallest x (where ok, unless nil)
// per group, the dtype's lowest or highest value for a group without
// values; nil when the group kernels do not apply.
func (gr *groups) extreme(x, ok *array.Array, most bool) *array.Array {
	dt := x.DType()
	ks := groupKernels(gr.f.dev, gr.n, dt, gr.key.dtype())
	if ks == nil {
		return nil
	}
	var init any
	switch {
	case dt.IsFloating() && most:
		init = math.Inf(-1)
	case dt.IsFloating():
		init = math.Inf(1)
	case dt == array.Int32 && most:
		init = int32(math.MinInt32)
	case dt == array.Int32:
		init = int32(math.MaxInt32)
	case most:
		init = int64(math.MinInt64)
	default:
		init = int64(math.MaxInt64)
	}
	out := array.On(gr.f.dev).Full(dt, init, gr.n)
	o, has := okArg(gr.f.dev, ok)
	n, flag := x.Size(), int32(0)
	if most {
		flag = 1
	}
	if err := ks.extreme.Launch(groupLaunch(n, gr.n, 8), gr.key.arg(), gr.key.lo, x.Contiguous(), o, has, int64(n), out, int32(gr.n), flag); err != nil {
		return array.Failed(err)
	}
	return out
}

// hashJoin is joinCodes by a hash table for joins other than outer
// on integer keys (numbers, timestamps, booleans, or strings through their
// codes): the table holds the smaller side's keys (several keys combined
// into one int64 by the right side's ranges) and the other side's rows
// probe it. Codes number the table's distinct keys in its order, not the
// keys'; left rows that cannot match get n, right rows n+1. ok is
// false where it does not apply (float keys, combined keys past int64, or
// keys narrow enough to index directly unless narrow is set). unique
// reports whether the right rows' codes are distinct.
func hashJoin(op string, f, r *Frame, on []string, narrow bool) (lc, rc *array.Array, n int, unique, ok bool, err error) {
	var lk, rk, lout, lnull, rnull *array.Array
	or := func(a, b *array.Array) *array.Array {
		switch {
		case a == nil:
			return b
		case b == nil:
			return a
		}
		return a.LogicalOr(b)
	}
	span := uint64(1) // the combined keys' range so far
	for _, k := range on {
		ls, err := f.col(op, k)
		if err != nil {
			return nil, nil, 0, false, false, err
		}
		rs, err := r.col(op+" (right frame)", k)
		if err != nil {
			return nil, nil, 0, false, false, err
		}
		la, ra, err := keyPair(op, ls, rs)
		if err != nil {
			return nil, nil, 0, false, false, err
		}
		if la.DType().IsFloating() {
			return nil, nil, 0, false, false, nil
		}
		if len(on) == 1 && ls.kind != String && ls.kind != Categorical && ls.valid == nil && rs.valid == nil {
			la, ra = ls.data, rs.data // int32 keys stay int32: the kernels read them
			if la.DType() == array.Bool {
				la, ra = la.AsType(array.Int32), ra.AsType(array.Int32)
			}
		}
		if ls.valid != nil {
			lnull = or(lnull, ls.valid.LogicalNot())
		}
		if rs.valid != nil {
			rnull = or(rnull, rs.valid.LogicalNot())
		}
		if len(on) == 1 {
			lk, rk = la, ra
			span = 0
			break
		}
		lo, hi := int64(0), int64(0)
		if r.n > 0 {
			if lo, hi, err = minMax(ra); err != nil {
				return nil, nil, 0, false, false, wrapErr(op, ErrValue, err, "key %q", k)
			}
		}
		w := uint64(hi-lo) + 1
		if w == 0 || span > math.MaxInt64/w {
			return nil, nil, 0, false, false, nil
		}
		span *= w
		lout = or(lout, la.Lt(lo).LogicalOr(la.Gt(hi)))
		lc, rc := la.Sub(lo), ra.Sub(lo)
		if lk == nil {
			lk, rk = lc, rc
		} else {
			lk, rk = lk.Mul(int64(w)).Add(lc), rk.Mul(int64(w)).Add(rc)
		}
	}
	// The table holds the smaller side's keys; the other side probes it.
	left := f.n < r.n
	bk, pk, nb := rk, lk, r.n
	if left {
		bk, pk, nb = lk, rk, f.n
		if lout != nil {
			bk = array.Where(lout, int64(-2), bk) // no right key is out of range
		}
	}
	// The empty slots' key: one outside the built side's range.
	empty := int64(-1)
	if len(on) == 1 && nb > 0 {
		lo, hi, err := minMax(bk)
		if err != nil {
			return nil, nil, 0, false, false, wrapErr(op, ErrValue, err, "key %q", on[0])
		}
		var fits bool
		if empty, fits = emptyKey(lo, hi); !fits {
			return nil, nil, 0, false, false, nil
		}
		if uint64(hi-lo) < math.MaxInt64 {
			span = uint64(hi-lo) + 1
		}
	}
	if !narrow && span != 0 && span < uint64(codeLimit(f.n+r.n)) {
		return nil, nil, 0, false, false, nil
	}
	t, bslot, err := newTable(bk, nb, empty)
	if err != nil {
		return nil, nil, 0, false, false, wrapErr(op, ErrValue, err, "building the table")
	}
	rank, d, err := t.denseRanks()
	if err != nil {
		return nil, nil, 0, false, false, wrapErr(op, ErrValue, err, "building the table")
	}
	pslot, err := t.find(pk)
	if err != nil {
		return nil, nil, 0, false, false, wrapErr(op, ErrValue, err, "probing the table")
	}
	// Left rows that cannot match get d, right ones d+1: codes the other
	// side lacks.
	found := rank.Take(pslot.Maximum(int64(0)), 0)
	if left {
		lc = rank.Take(bslot, 0)
		if miss := or(lnull, lout); miss != nil {
			lc = array.Where(miss, int64(d), lc)
		}
		rc = array.Where(or(pslot.Lt(0), rnull), int64(d+1), found)
	} else {
		rc = rank.Take(bslot, 0)
		if rnull != nil {
			rc = array.Where(rnull, int64(d+1), rc)
		}
		lc = array.Where(or(pslot.Lt(0), or(lnull, lout)), int64(d), found)
	}
	if err := lc.Err(); err != nil {
		return nil, nil, 0, false, false, wrapErr(op, ErrValue, err, "probing the table")
	}
	return lc, rc, d, !left && d == r.n && rnull == nil, true, rc.Err()
}
