package array

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// countingBackend counts calls and live buffers.
type countingBackend struct {
	backend.Backend
	allocs, frees, evals, reads, syncs, reduces atomic.Int64
	lastKey                                     atomic.Value
	nodes                                       atomic.Int64
}

func (c *countingBackend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	c.allocs.Add(1)
	return c.Backend.Alloc(dt, n)
}

func (c *countingBackend) Free(b backend.Buffer) {
	c.frees.Add(1)
	c.Backend.Free(b)
}

func (c *countingBackend) Eval(p *backend.Program, out backend.Operand) error {
	c.evals.Add(1)
	c.lastKey.Store(p.Key())
	c.nodes.Store(int64(len(p.Nodes)))
	return c.Backend.Eval(p, out)
}

func (c *countingBackend) Reduce(r *backend.Reduction) error {
	c.reduces.Add(1)
	return c.Backend.Reduce(r)
}

func (c *countingBackend) Read(dst any, src backend.Buffer, off int) error {
	c.reads.Add(1)
	return c.Backend.Read(dst, src, off)
}

func (c *countingBackend) Sync() error {
	c.syncs.Add(1)
	return c.Backend.Sync()
}

func (c *countingBackend) live() int64 { return c.allocs.Load() - c.frees.Load() }

func countingDevice() (*Maker, *countingBackend) { return countingOn(CPU()) }

// countingOn wraps the backend of d.
func countingOn(d *Maker) (*Maker, *countingBackend) {
	c := &countingBackend{Backend: d.be}
	return &Maker{be: c, gpu: d.gpu}, c
}

// relu(1.5x+0.5)*2 runs as one fused program with one allocation (its
// output), and reading the result twice evaluates it once.
func TestFusedChainIsOneProgram(t *testing.T) {
	d, c := countingDevice()
	x := d.NewRNG(1).Uniform(Float32, -1, 1, 1000)
	a0, e0 := c.allocs.Load(), c.evals.Load()
	y := x.Mul(1.5).Add(0.5).ReLU().Mul(2)
	if c.evals.Load() != e0 || c.allocs.Load() != a0 {
		t.Fatalf("building the chain evaluated or allocated")
	}
	if !y.IsLazy() {
		t.Fatal("chain result is not lazy")
	}
	f1, err := y.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.Float32s(); err != nil {
		t.Fatal(err)
	}
	if n := c.evals.Load() - e0; n != 1 {
		t.Errorf("%d evaluations, want 1", n)
	}
	if n := c.allocs.Load() - a0; n != 1 {
		t.Errorf("%d allocations, want 1 (the output)", n)
	}
	if n := c.nodes.Load(); n != 8 {
		t.Errorf("program has %d nodes, want 8 (x, 4 ops, 3 scalars)", n)
	}
	xs := readHost(t, x)
	for i, v := range xs.v {
		want := float64(float32(float32(float32(v)*1.5) + 0.5))
		if want < 0 {
			want = 0
		}
		want = float64(float32(want) * 2)
		if float64(f1[i]) != want {
			t.Fatalf("element %d = %v, want %v", i, f1[i], want)
		}
	}
}

// The program key ignores scalar values, shapes and strides, so that the
// number of compiled kernels stays bounded.
func TestProgramKeyIgnoresValuesAndShapes(t *testing.T) {
	d, c := countingDevice()
	key := func(a *Array) string {
		if err := a.Err(); err != nil {
			t.Fatal(err)
		}
		return c.lastKey.Load().(string)
	}
	k1 := key(d.Ones(Float32, 10).Eval().Mul(1.5).Add(0.5).ReLU())
	k2 := key(d.Ones(Float32, 3, 7).Eval().Mul(-2.0).Add(9).ReLU())
	k3 := key(d.Ones(Float32, 4, 5).Eval().T().Mul(3.0).Add(1).ReLU())
	if k1 != k2 || k1 != k3 {
		t.Errorf("keys differ:\n%s\n%s\n%s", k1, k2, k3)
	}
	k4 := key(d.Ones(Float64, 10).Eval().Mul(1.5).Add(0.5).ReLU())
	if k4 == k1 {
		t.Errorf("float64 program has the float32 key")
	}
}

// Long chains stay bounded: operands are evaluated before the expression
// grows past maxExprNodes, and the values stay right.
func TestExpressionSizeIsBounded(t *testing.T) {
	d, c := countingDevice()
	x := d.Arange(Float64, 5)
	y := x
	for i := 0; i < 200; i++ {
		y = y.Add(x).Sub(1)
	}
	got := readHost(t, y)
	for i, v := range got.v {
		if want := float64(i)*201 - 200; v != want {
			t.Fatalf("element %d = %v, want %v", i, v, want)
		}
	}
	if n := c.nodes.Load(); n > maxExprNodes+4 {
		t.Errorf("last program has %d nodes", n)
	}
	// x is evaluated at its second use, then each program takes about a
	// dozen iterations.
	if n := c.evals.Load(); n < 10 || n > 25 {
		t.Errorf("%d evaluations for 400 operations", n)
	}
}

// A chain of operations, including MatMul, reductions and softmax, issues
// no read and no synchronisation; only reading the result does. On a GPU
// the backend's own count of host waits must not move either.
func TestChainDoesNotSynchronise(t *testing.T) {
	t.Run("cpu", func(t *testing.T) { chainDoesNotSynchronise(t, CPU()) })
	t.Run("cuda", func(t *testing.T) { chainDoesNotSynchronise(t, testGPU(t)) })
}

func chainDoesNotSynchronise(t *testing.T, dev *Maker) {
	d, c := countingOn(dev)
	var waits0 int64
	if d.gpu != nil {
		waits0 = d.gpu.Syncs()
	}
	gpuWaits := func() int64 {
		if d.gpu == nil {
			return 0
		}
		return d.gpu.Syncs() - waits0
	}
	r := d.NewRNG(4)
	x := r.Normal(Float32, 0, 1, 64, 32)
	w := r.Normal(Float32, 0, 1, 32, 16)
	b := r.Normal(Float32, 0, 1, 16)
	y := x.MatMul(w).Add(b).ReLU().Softmax(1).Sum(0).Mul(2).Eval()
	_ = y.Reshape(4, 4).T().Contiguous().Max()
	if c.reads.Load() != 0 || c.syncs.Load() != 0 || gpuWaits() != 0 {
		t.Fatalf("the chain read %d times, synced %d times, and the GPU backend waited %d times", c.reads.Load(), c.syncs.Load(), gpuWaits())
	}
	if err := y.Err(); err != nil {
		t.Fatal(err)
	}
	if c.reads.Load() != 0 || c.syncs.Load() != 0 || gpuWaits() != 0 {
		t.Fatalf("Err synchronised")
	}
	v := readHost(t, y)
	if c.reads.Load() == 0 {
		t.Fatalf("reading did not go through Read")
	}
	sum := 0.0
	for _, e := range v.v {
		sum += e
	}
	if abs(sum-128) > 1e-3 { // 64 softmax rows of 1, times 2
		t.Errorf("sum of column sums %v, want 128", sum)
	}
}

// An index-based array (Arange) broadcast into a bigger shape keeps its
// values: it is evaluated at its own shape first.
func TestIotaBroadcast(t *testing.T) {
	d := CPU()
	y := d.Arange(Float32, 3).Add(d.Zeros(Float32, 2, 3))
	checkHost(t, "arange+zeros", readHost(t, y), []int{2, 3}, []float64{0, 1, 2, 0, 1, 2}, 0)
	z := d.Zeros(Float32, 2, 1).Add(d.Arange(Float32, 3).Mul(2))
	checkHost(t, "zeros+2*arange", readHost(t, z), []int{2, 3}, []float64{0, 2, 4, 0, 2, 4}, 0)
}

// Close frees at once; arrays nobody closes are freed by the cleanup.
func TestMemoryIsReleased(t *testing.T) {
	d, c := countingDevice()
	x := d.Ones(Float32, 100).Eval()
	v := x.Reshape(10, 10)
	vt := v.T()
	y := vt.Add(1).Eval()
	vt.Close() // views hold the memory too
	s := y.Sum(0)
	if c.live() != 3 {
		t.Fatalf("%d live buffers, want 3", c.live())
	}
	x.Close()
	if c.live() != 3 {
		t.Fatalf("closing x freed memory a view still uses")
	}
	v.Close()
	if c.live() != 2 {
		t.Fatalf("closing the last view did not free: %d live", c.live())
	}
	y.Close()
	s.Close()
	if c.live() != 0 {
		t.Fatalf("%d live buffers after closing everything", c.live())
	}
	// The backstop.
	func() {
		for i := 0; i < 20; i++ {
			a := d.Ones(Float64, 50).Add(float64(i)).Eval()
			_ = a.Sum()
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for c.live() != 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if c.live() != 0 {
		t.Errorf("%d buffers never freed by the cleanup", c.live())
	}
}

// Many goroutines read one lazy array: it is evaluated once and all see
// the same values (run with -race).
func TestConcurrentReads(t *testing.T) {
	d, c := countingDevice()
	x := d.Arange(Float64, 5000).Mul(0.5).Sin()
	var wg sync.WaitGroup
	results := make([][]float64, 8)
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := x.Float64s()
			if err != nil {
				t.Error(err)
			}
			results[g] = v
			_ = x.Add(1).Sum().Err()
		}()
	}
	wg.Wait()
	for g := range results {
		for i := range results[g] {
			if results[g][i] != results[0][i] {
				t.Fatalf("goroutine %d saw different values", g)
			}
		}
	}
	if n := c.evals.Load(); n > 9 {
		t.Errorf("%d evaluations", n)
	}
}

// Dependency tokens are recycled: an entry left by an array that was
// evaluated never forces the token's later holder, and a pending array
// keeps its entry valid however many tokens are recycled around it.
func TestDependencyTokensRecycled(t *testing.T) {
	d := CPU()
	x := d.Arange(Float32, 4).Eval()
	w := d.Ones(Float32, 4).Eval()
	y := x.Add(1) // pending: its token is listed in x's storage
	if err := y.Err(); err != nil {
		t.Fatal(err)
	}
	old := x.Mul(10) // pending, reads x, survives everything below
	for range 1000 {
		z := w.Add(1).Eval() // tokens recycled, some perhaps y's
		z.Close()
	}
	z := w.Add(2) // pending, reads only w: may hold y's recycled token
	if err := x.Assign(7); err != nil {
		t.Fatal(err)
	}
	if !z.IsLazy() {
		t.Error("Assign to x evaluated an array that does not read x")
	}
	if old.IsLazy() {
		t.Error("Assign to x left a pending reader of x unevaluated")
	}
	checkHost(t, "old", readHost(t, old), []int{4}, []float64{0, 10, 20, 30}, 0)
	checkHost(t, "y", readHost(t, y), []int{4}, []float64{1, 2, 3, 4}, 0)
	checkHost(t, "z", readHost(t, z), []int{4}, []float64{3, 3, 3, 3}, 0)
	// Many pending readers, most dropped: the list is pruned, the live
	// ones are evaluated before the write.
	var keep []*Array
	for i := range 300 {
		r := x.Add(float64(i))
		if i%50 == 0 {
			keep = append(keep, r)
		}
	}
	runtime.GC()
	if err := x.Assign(0); err != nil {
		t.Fatal(err)
	}
	for k, r := range keep {
		v := float64(50 * k)
		checkHost(t, "kept reader", readHost(t, r), []int{4}, []float64{7 + v, 7 + v, 7 + v, 7 + v}, 0)
	}
}

// The pending array made last (the Maker's young one, not yet listed with
// the storages it reads) and the ones it replaced (listed then) are both
// evaluated by an in-place write to what they read, and only they.
func TestAssignSeesYoungReaders(t *testing.T) {
	d := CPU()
	x := d.Arange(Float32, 4).Eval()
	w := d.Ones(Float32, 4).Eval()
	z := x.Add(1) // young
	if err := x.Assign(10); err != nil {
		t.Fatal(err)
	}
	if z.IsLazy() {
		t.Error("Assign to x left the young reader of x pending")
	}
	checkHost(t, "z", readHost(t, z), []int{4}, []float64{1, 2, 3, 4}, 0)
	a := x.Mul(2) // young, then replaced by b: listed with x's storage
	b := w.Add(3) // young, reads only w
	if err := x.Assign(0); err != nil {
		t.Fatal(err)
	}
	if a.IsLazy() {
		t.Error("Assign to x left a replaced reader of x pending")
	}
	if !b.IsLazy() {
		t.Error("Assign to x evaluated the young array, which does not read x")
	}
	checkHost(t, "a", readHost(t, a), []int{4}, []float64{20, 20, 20, 20}, 0)
	c := x.Sub(1) // young
	if err := x.EvalReaders(); err != nil {
		t.Fatal(err)
	}
	if c.IsLazy() {
		t.Error("EvalReaders left the young reader pending")
	}
	checkHost(t, "b", readHost(t, b), []int{4}, []float64{4, 4, 4, 4}, 0)
	checkHost(t, "c", readHost(t, c), []int{4}, []float64{-1, -1, -1, -1}, 0)
}

// Each goroutine writes its own array in place after making a pending
// reader of it, while others make pending arrays all the time (so that the
// young one is replaced, and listed, at any moment): the reader always
// sees the values from before the write (run with -race).
func TestYoungReadersConcurrent(t *testing.T) {
	d := CPU()
	noise := d.Ones(Float32, 8).Eval()
	stop := make(chan struct{})
	var noisy, writers sync.WaitGroup
	for range 2 {
		noisy.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := noise.Add(1)
				q := noise.Mul(p)
				q.Close()
				p.Close()
			}
		})
	}
	errs := make(chan error, 4)
	for g := range 4 {
		writers.Go(func() {
			src := d.Zeros(Float32, 8).Eval()
			for k := range 300 {
				v := float64(g*1000 + k)
				if err := src.Assign(v); err != nil {
					errs <- err
					return
				}
				p := src.Mul(2)
				if err := src.Assign(v + 1); err != nil {
					errs <- err
					return
				}
				got, err := p.Float32s()
				if err != nil {
					errs <- err
					return
				}
				for _, x := range got {
					if float64(x) != 2*v {
						errs <- fmt.Errorf("goroutine %d step %d: the reader saw %v, want %v", g, k, x, 2*v)
						return
					}
				}
				p.Close()
			}
		})
	}
	writers.Wait()
	close(stop)
	noisy.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
