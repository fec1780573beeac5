package sim_test

// The barrier-mode alternatives measured before choosing coroutines: the
// same tiled matmul run by executors that give every thread of a block a
// goroutine and make them meet at a sync.Cond barrier, either spawning the
// goroutines per block or keeping a pool of them per worker. They implement
// only what the tiled matmul needs (barriers and static shared memory) and
// check nothing, so they flatter the alternatives.

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

type condBarrier struct {
	mu       sync.Mutex
	cond     sync.Cond
	n, count int
	gen      uint64
}

func (b *condBarrier) wait() {
	b.mu.Lock()
	g := b.gen
	if b.count++; b.count == b.n {
		b.count = 0
		b.gen++
		b.cond.Broadcast()
	} else {
		for g == b.gen {
			b.cond.Wait()
		}
	}
	b.mu.Unlock()
}

type goBlock struct {
	bar    condBarrier
	mu     sync.Mutex
	shared []unsafe.Pointer
}

func newGoBlock(n int) *goBlock {
	b := &goBlock{}
	b.bar.n = n
	b.bar.cond.L = &b.bar.mu
	return b
}

// goExec is one thread's executor.
type goExec struct {
	b *goBlock
	k int
}

func (e *goExec) Barrier(*kernel.Thread, kernel.SyncKind, bool) int32 { e.b.bar.wait(); return 0 }
func (e *goExec) Shared(_ *kernel.Thread, d kernel.SharedDecl) unsafe.Pointer {
	b := e.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.k == len(b.shared) {
		b.shared = append(b.shared, reflectNew(d))
	}
	e.k++
	return b.shared[e.k-1]
}
func (e *goExec) Warp(*kernel.Thread, kernel.WarpOp, uint32, uint64, int32) uint64 { panic("no warps") }
func (e *goExec) DynamicShared(*kernel.Thread) []byte                              { panic("no dynamic shared") }
func (e *goExec) Access(*kernel.Thread, unsafe.Pointer, uintptr, kernel.Access, *kernel.Site) {
}
func (e *goExec) Loop(*kernel.Thread, *kernel.Site) {}

func (e *goExec) OutOfRange(*kernel.Thread, int, int, unsafe.Pointer, *kernel.Site) {}

func reflectNew(d kernel.SharedDecl) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(make([]byte, d.Type.Size())))
}

// runGoroutines runs a launch with one goroutine per thread. With pool,
// each worker keeps its block's goroutines and hands them the next block;
// without, it spawns them per block.
func runGoroutines(grid, block kernel.Dim3, f func(*kernel.Thread), pool bool) {
	nb, n := int32(grid.Size()), int32(block.Size())
	var next atomic.Int32
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var jobs []chan *goBlock
			var done sync.WaitGroup
			var blk atomic.Int32
			run := func(r int32, b *goBlock) {
				ex := &goExec{b: b}
				th := kernel.Thread{ThreadIdx: kernel.Dim3{X: r % block.X, Y: r / block.X, Z: 0}, BlockDim: block, GridDim: grid}
				bi := blk.Load()
				th.BlockIdx = kernel.Dim3{X: bi % grid.X, Y: bi / grid.X}
				kernel.Bind(&th, ex)
				f(&th)
				done.Done()
			}
			if pool {
				jobs = make([]chan *goBlock, n)
				for r := range n {
					jobs[r] = make(chan *goBlock)
					go func() {
						for b := range jobs[r] {
							run(r, b)
						}
					}()
				}
				defer func() {
					for _, c := range jobs {
						close(c)
					}
				}()
			}
			for {
				bi := next.Add(1) - 1
				if bi >= nb {
					return
				}
				blk.Store(bi)
				b := newGoBlock(int(n))
				done.Add(int(n))
				for r := range n {
					if pool {
						jobs[r] <- b
					} else {
						go run(r, b)
					}
				}
				done.Wait()
			}
		}()
	}
	wg.Wait()
}

func TestGoroutineAlternativeIsCorrect(t *testing.T) {
	const s = 48
	r := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float32, s*s), make([]float32, s*s)
	for i := range a {
		a[i], b[i] = float32(r.IntN(9)), float32(r.IntN(9))
	}
	for _, pool := range []bool{false, true} {
		c := make([]float32, s*s)
		runGoroutines(d3(s/16, s/16, 1), d3(16, 16, 1), func(t *kernel.Thread) { lecture.TiledMatMul(t, a, b, c, s, s, s) }, pool)
		for i := range s {
			for j := range s {
				var want float32
				for k := range s {
					want += a[i*s+k] * b[k*s+j]
				}
				if c[i*s+j] != want {
					t.Fatalf("pool=%v: c[%d][%d] = %v, want %v", pool, i, j, c[i*s+j], want)
				}
			}
		}
	}
}

// BenchmarkBarrierMode compares the simulator's coroutines with the two
// goroutine executors on the 16x16-tiled matmul.
func BenchmarkBarrierMode(b *testing.B) {
	for _, s := range []int32{64, 256} {
		r := rand.New(rand.NewPCG(1, 2))
		x, y, z := make([]float32, s*s), make([]float32, s*s), make([]float32, s*s)
		for i := range x {
			x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		f := func(t *kernel.Thread) { lecture.TiledMatMul(t, x, y, z, s, s, s) }
		grid, block := d3(s/16, s/16, 1), d3(16, 16, 1)
		b.Run(fmt.Sprint("coroutines-", s), func(b *testing.B) {
			for b.Loop() {
				if err := sim.Launch(sim.Config{Grid: grid, Block: block}, sim.Kernel{Func: f}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprint("goroutines-spawned-", s), func(b *testing.B) {
			for b.Loop() {
				runGoroutines(grid, block, f, false)
			}
		})
		b.Run(fmt.Sprint("goroutines-pooled-", s), func(b *testing.B) {
			for b.Loop() {
				runGoroutines(grid, block, f, true)
			}
		})
	}
}
