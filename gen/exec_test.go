package gen

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

// A small executor for the tests of this package: every thread of a block
// is a goroutine; barriers, shared memory and full-warp operations have
// CUDA's meaning. The real simulator is package sim; this one exists so
// that the checked twins and the kernels can be compared here without it.

type oob struct {
	site  *kernel.Site
	index int
	n     int
}

type launchResult struct {
	mu       sync.Mutex
	oob      []oob
	accesses map[*kernel.Site]map[kernel.Access]int
	panics   []any
	printed  []string // kernel.Printf output, in no particular order
}

type blockExec struct {
	res      *launchResult
	n        int
	mu       sync.Mutex
	cond     *sync.Cond
	arrived  int
	gen      int
	count    int32
	last     int32
	shared   [][]byte
	nextDecl map[*kernel.Thread]int
	dyn      []byte
	warps    []*warpExec
}

type warpExec struct {
	mu      sync.Mutex
	cond    *sync.Cond
	n       int
	arrived int
	gen     int
	bits    [32]uint64
	out     [32]uint64
}

type outOfRange struct{}

func (b *blockExec) Barrier(t *kernel.Thread, kind kernel.SyncKind, pred bool) int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if pred {
		b.count++
	}
	b.arrived++
	g := b.gen
	if b.arrived == b.n {
		b.arrived = 0
		b.gen++
		b.cond.Broadcast()
		c := b.count
		b.count = 0
		b.last = c
		return c
	}
	for g == b.gen {
		b.cond.Wait()
	}
	return b.last
}

// exit removes a finished thread from the barrier, as CUDA does for a
// thread that has exited.
func (b *blockExec) exit() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.n > 0 && b.arrived == b.n {
		b.arrived = 0
		b.gen++
		b.last = b.count
		b.count = 0
		b.cond.Broadcast()
	}
}

func (b *blockExec) Warp(t *kernel.Thread, op kernel.WarpOp, mask uint32, bits uint64, arg int32) uint64 {
	lane := int(t.LaneID())
	w := b.warps[t.WarpID()]
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bits[lane] = bits
	w.arrived++
	g := w.gen
	if w.arrived == w.n {
		// The last lane computes every lane's result.
		var ballot uint64
		for l := 0; l < w.n; l++ {
			if w.bits[l] != 0 {
				ballot |= 1 << l
			}
		}
		for l := 0; l < w.n; l++ {
			src := l
			switch op {
			case kernel.ShflIdx:
				src = int(arg) & 31
			case kernel.ShflUpOp:
				if l-int(arg) >= 0 {
					src = l - int(arg)
				}
			case kernel.ShflDownOp:
				if l+int(arg) < 32 {
					src = l + int(arg)
				}
			case kernel.ShflXorOp:
				src = l ^ int(arg)
			}
			if src >= w.n {
				src = l
			}
			switch op {
			case kernel.VoteBallot:
				w.out[l] = ballot
			case kernel.VoteAny:
				w.out[l] = b2u(ballot != 0)
			case kernel.VoteAll:
				w.out[l] = b2u(ballot == 1<<w.n-1)
			case kernel.WarpSync:
			default:
				w.out[l] = w.bits[src]
			}
		}
		w.arrived = 0
		w.gen++
		w.cond.Broadcast()
		return w.out[lane]
	}
	for g == w.gen {
		w.cond.Wait()
	}
	return w.out[lane]
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (b *blockExec) Shared(t *kernel.Thread, d kernel.SharedDecl) unsafe.Pointer {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.nextDecl[t]
	b.nextDecl[t] = k + 1
	for len(b.shared) <= k {
		buf := make([]uint64, (int(d.Type.Size())+7)/8+1)
		p := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
		for i := range p {
			p[i] = 0xA5 // poison
		}
		b.shared = append(b.shared, p)
	}
	return unsafe.Pointer(&b.shared[k][0])
}

func (b *blockExec) DynamicShared(t *kernel.Thread) []byte { return b.dyn }

func (b *blockExec) Access(t *kernel.Thread, addr unsafe.Pointer, size uintptr, acc kernel.Access, site *kernel.Site) {
	b.res.mu.Lock()
	defer b.res.mu.Unlock()
	if b.res.accesses[site] == nil {
		b.res.accesses[site] = map[kernel.Access]int{}
	}
	b.res.accesses[site][acc]++
}

func (b *blockExec) OutOfRange(t *kernel.Thread, index, length int, _ unsafe.Pointer, site *kernel.Site) {
	b.res.mu.Lock()
	b.res.oob = append(b.res.oob, oob{site, index, length})
	b.res.mu.Unlock()
	panic(outOfRange{})
}

func (b *blockExec) Loop(*kernel.Thread, *kernel.Site) {}

// Print implements kernel.Printer.
func (b *blockExec) Print(t *kernel.Thread, text string) {
	b.res.mu.Lock()
	b.res.printed = append(b.res.printed, kernel.PrefixLines(t.BlockIdx, t.ThreadIdx, text))
	b.res.mu.Unlock()
}

// launch runs fn (a kernel or its checked twin) on a grid.
func launch(t testing.TB, fn any, grid, block kernel.Dim3, dynBytes int, args ...any) *launchResult {
	t.Helper()
	res := &launchResult{accesses: map[*kernel.Site]map[kernel.Access]int{}}
	fv := reflect.ValueOf(fn)
	argv := make([]reflect.Value, len(args)+1)
	for i, a := range args {
		argv[i+1] = reflect.ValueOf(a)
	}
	n := block.Size()
	for bz := int32(0); bz < grid.Z; bz++ {
		for by := int32(0); by < grid.Y; by++ {
			for bx := int32(0); bx < grid.X; bx++ {
				b := &blockExec{res: res, n: n, nextDecl: map[*kernel.Thread]int{}}
				b.cond = sync.NewCond(&b.mu)
				if dynBytes > 0 {
					buf := make([]uint64, (dynBytes+7)/8)
					b.dyn = unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), dynBytes)
				}
				for w := 0; w < (n+31)/32; w++ {
					we := &warpExec{n: min(32, n-32*w)}
					we.cond = sync.NewCond(&we.mu)
					b.warps = append(b.warps, we)
				}
				var wg sync.WaitGroup
				for r := 0; r < n; r++ {
					th := &kernel.Thread{
						ThreadIdx: kernel.Dim3{X: int32(r) % block.X, Y: int32(r) / block.X % block.Y, Z: int32(r) / (block.X * block.Y)},
						BlockIdx:  kernel.Dim3{X: bx, Y: by, Z: bz},
						BlockDim:  block,
						GridDim:   grid,
					}
					kernel.Bind(th, b)
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer b.exit()
						defer func() {
							if p := recover(); p != nil {
								if _, ok := p.(outOfRange); !ok {
									res.mu.Lock()
									res.panics = append(res.panics, fmt.Sprint(p))
									res.mu.Unlock()
								}
							}
						}()
						a := append([]reflect.Value(nil), argv...)
						a[0] = reflect.ValueOf(th)
						fv.Call(a)
					}()
				}
				wg.Wait()
			}
		}
	}
	if len(res.panics) > 0 {
		t.Fatalf("kernel panicked: %v", res.panics[0])
	}
	return res
}
