package gocu_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cublas"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// The GPU under faults and load. These tests run on a real GPU and skip
// without one; each probe reports what it tried, how many times, and what
// was lost (the test fails if anything was).

// TestGPUOutOfMemory allocates until the driver refuses: the error is
// cuda.ErrOutOfMemory and names the sizes; after the buffers are freed and
// the caching allocator has returned its cache, the same request succeeds;
// arrays see the failure as a sticky error, never a panic.
func TestGPUOutOfMemory(t *testing.T) {
	d := gpu(t)
	const chunk = 4 << 30 // 4 GiB a buffer
	var bufs []*gocu.Buffer[byte]
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
		d.TrimCache()
	}()
	var oom error
	for i := 0; i < 1024 && oom == nil; i++ {
		b, err := gocu.Alloc[byte](d, chunk)
		if err != nil {
			oom = err
			break
		}
		bufs = append(bufs, b)
	}
	if oom == nil {
		t.Fatal("1024 buffers of 4 GiB fit: the driver never refused")
	}
	if !errors.Is(oom, cuda.ErrOutOfMemory) {
		t.Fatalf("the refusal %v is not cuda.ErrOutOfMemory", oom)
	}
	if !strings.Contains(oom.Error(), "4.00 GiB") && !strings.Contains(oom.Error(), "4 GiB") && !strings.Contains(oom.Error(), "4294967296") {
		t.Errorf("the error does not name the request's size: %v", oom)
	}
	t.Logf("probe: %d buffers of 4 GiB, then: %v", len(bufs), oom)

	// Arrays on a full device fail with a sticky error.
	a := array.On(d)
	x := a.Zeros(array.Float32, chunk/4)
	err := x.Err()
	if !errors.Is(err, array.ErrOutOfMemory) || !errors.Is(err, cuda.ErrOutOfMemory) {
		t.Errorf("an array on a full device: %v, want ErrOutOfMemory", err)
	}
	if y := x.Add(1); !errors.Is(y.Err(), array.ErrOutOfMemory) {
		t.Errorf("an operation on the failed array: %v", y.Err())
	}

	for _, b := range bufs {
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
	}
	bufs = nil
	if err := d.TrimCache(); err != nil {
		t.Fatal(err)
	}
	b, err := gocu.Alloc[byte](d, chunk)
	if err != nil {
		t.Fatalf("after freeing everything, the same request: %v", err)
	}
	bufs = append(bufs, b)
	if z := a.Zeros(array.Float32, 1<<20); z.Err() != nil {
		t.Errorf("a new array after the flush: %v", z.Err())
	}
}

// usedMemory is the device memory in use, as the driver sees it.
func usedMemory(t *testing.T, d *gocu.Device) int64 {
	t.Helper()
	free, total, err := d.CUDA().MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	return total - free
}

// TestGPUMemoryStaysFlat: 100,000 allocate/free cycles of mixed sizes and
// 100,000 array temporaries leave the device's used memory where it was,
// within one pool segment, and the Go heap where it was.
func TestGPUMemoryStaysFlat(t *testing.T) {
	d := gpu(t)
	if err := d.TrimCache(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	before := usedMemory(t, d)
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 100, 4096, 1 << 16, 1 << 20, 3 << 20, 17 << 20}
	const cycles = 100_000
	live := make([]*gocu.Buffer[byte], 0, 16)
	for i := range cycles {
		b, err := gocu.Alloc[byte](d, sizes[r.IntN(len(sizes))])
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		live = append(live, b)
		if len(live) == cap(live) || r.IntN(3) == 0 {
			k := r.IntN(len(live))
			if err := live[k].Free(); err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
			live = append(live[:k], live[k+1:]...)
		}
	}
	for _, b := range live {
		b.Free()
	}
	a := array.On(d)
	x := a.NewRNG(3).Normal(array.Float32, 0, 1, 1024)
	for i := range cycles {
		y := x.Mul(float32(i % 7)).Add(1).Eval()
		if i%1000 == 0 {
			if err := y.Err(); err != nil {
				t.Fatalf("temporary %d: %v", i, err)
			}
		}
		y.Close()
	}
	s, err := x.Sum().Item()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := d.TrimCache(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	after := usedMemory(t, d)
	const segment = 2 << 20
	t.Logf("probe: %d allocate/free cycles and %d array temporaries: device used %d -> %d bytes, Go heap %d -> %d bytes (sum %g)",
		cycles, cycles, before, after, ms0.HeapInuse, ms1.HeapInuse, s)
	// The arrays' own state (compiled kernels, the cuBLAS workspace when
	// used) is made once; allow one segment beyond it.
	if after > before+segment+(64<<20) {
		t.Errorf("device memory grew from %d to %d bytes", before, after)
	}
	if ms1.HeapInuse > ms0.HeapInuse+(64<<20) {
		t.Errorf("the Go heap grew from %d to %d bytes", ms0.HeapInuse, ms1.HeapInuse)
	}
}

// faultSrc holds a kernel that writes far outside any allocation.
const faultSrc = `extern "C" __global__ void wild_write(float* x, long long off) { x[off] = 1.0f; }
extern "C" __global__ void fill(float* x, float v, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = v;
}`

// TestGPUFaultingKernel: an illegal address in a user kernel, with
// GOCU_LAUNCH_BLOCKING=1, gives an error that names the kernel and says
// that the context is lost; every later call on the device returns that
// error and none crashes. The way back is a new process: the parent, a
// process of its own, goes on using the GPU. It runs in a child process,
// since the fault loses the context for the whole process.
func TestGPUFaultingKernel(t *testing.T) {
	if os.Getenv("GOCU_TEST_CHILD") == "fault" {
		faultChild()
		return
	}
	d := gpu(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPUFaultingKernel$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCU_TEST_CHILD=fault", "GOCU_LAUNCH_BLOCKING=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child crashed or failed: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"kernel wild_write", "hardening_gpu_test.go:", "context is lost", "LATER 6 of 6 sticky", "NO PANIC"} {
		if !strings.Contains(s, want) {
			t.Errorf("child output lacks %q:\n%s", want, s)
		}
	}
	// The way back: this process was never touched.
	b, err := gocu.FromSlice(d, []float32{1, 2, 3})
	if err != nil {
		t.Fatalf("the parent after the child's fault: %v", err)
	}
	defer b.Free()
	if got, err := b.ToSlice(); err != nil || got[1] != 2 {
		t.Errorf("the parent's round trip: %v %v", got, err)
	}
}

func faultChild() {
	defer func() {
		if p := recover(); p != nil {
			fmt.Printf("PANIC %v\n", p)
			os.Exit(1)
		}
		fmt.Println("NO PANIC")
	}()
	d, err := gocu.Open("cuda:0")
	if err != nil {
		fmt.Println("OPEN", err)
		return
	}
	m, err := d.Compile(faultSrc)
	if err != nil {
		fmt.Println("COMPILE", err)
		return
	}
	k, _ := m.Kernel("wild_write")
	fill, _ := m.Kernel("fill")
	x, _ := gocu.Alloc[float32](d, 16)
	arr := array.On(d).Ones(array.Float32, 16).Eval()
	err = k.Launch(gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 1}}, x, int64(1)<<40)
	fmt.Printf("LAUNCH %v\n", err)
	if err == nil || !errors.Is(err, cuda.ErrContextLost) {
		fmt.Println("the blocking launch did not report the lost context")
	}
	// Every later call fails with the sticky error, without crashing.
	later := []error{
		func() error { _, err := gocu.Alloc[float32](d, 4); return err }(),
		x.CopyFrom([]float32{1}),
		fill.Launch(gocu.Grid1D(16, 32), x, float32(1), int32(16)),
		d.Synchronize(),
		arr.Add(1).Err(),
		func() error { _, err := arr.Float32s(); return err }(),
	}
	sticky := 0
	for _, e := range later {
		if errors.Is(e, cuda.ErrContextLost) {
			sticky++
		} else {
			fmt.Printf("NOT STICKY %v\n", e)
		}
	}
	fmt.Printf("LATER %d of %d sticky\n", sticky, len(later))
}

// TestGPUConcurrentMixedWork: 8 goroutines, each doing 10,000 mixed
// launches, array operations and copies on one device (run it under -race
// too); every result is checked.
func TestGPUConcurrentMixedWork(t *testing.T) {
	d := gpu(t)
	m, err := d.Compile(faultSrc)
	if err != nil {
		t.Fatal(err)
	}
	fill, err := m.Kernel("fill")
	if err != nil {
		t.Fatal(err)
	}
	iters := 10_000
	if testing.Short() {
		iters = 500
	}
	const workers, n = 8, 256
	a := array.On(d)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, err := gocu.Alloc[float32](d, n)
			if err != nil {
				errs <- err
				return
			}
			defer buf.Free()
			host := make([]float32, n)
			for i := range iters {
				v := float32(w*iters + i)
				switch i % 3 {
				case 0: // a user kernel, then a copy back
					if err := fill.Launch(gocu.Grid1D(n, 128), buf, v, int32(n)); err != nil {
						errs <- err
						return
					}
					if err := buf.CopyTo(host); err != nil {
						errs <- err
						return
					}
					if host[n-1] != v {
						errs <- fmt.Errorf("worker %d, iteration %d: the kernel wrote %v, want %v", w, i, host[n-1], v)
						return
					}
				case 1: // array operations
					s, err := a.Full(array.Float32, v, n).Mul(2).Sum().Item()
					if err != nil {
						errs <- err
						return
					}
					if want := 2 * float64(v) * n; s != want {
						errs <- fmt.Errorf("worker %d, iteration %d: sum %v, want %v", w, i, s, want)
						return
					}
				case 2: // a copy in and an array over the buffer
					for j := range host {
						host[j] = v + float32(j)
					}
					if err := buf.CopyFrom(host); err != nil {
						errs <- err
						return
					}
					mx, err := array.FromBuffer(buf).Max().Item()
					if err != nil {
						errs <- err
						return
					}
					if mx != float64(v+n-1) {
						errs <- fmt.Errorf("worker %d, iteration %d: max %v, want %v", w, i, mx, v+n-1)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("probe: %d goroutines x %d mixed operations (launch+copy, array chain+read, copy+array over the buffer)", workers, iters)
}

// TestGPUSoak runs mixed work for GOCU_SOAK (e.g. 2m; skipped when unset)
// and reports throughput and memory at the start and at the end.
func TestGPUSoak(t *testing.T) {
	dur, err := time.ParseDuration(os.Getenv("GOCU_SOAK"))
	if err != nil || dur <= 0 {
		t.Skip("set GOCU_SOAK=2m to soak the GPU")
	}
	d := gpu(t)
	a := array.On(d)
	x := a.NewRNG(5).Normal(array.Float32, 0, 1, 1<<16)
	w := a.NewRNG(6).Normal(array.Float32, 0, 0.1, 256, 256)
	type sample struct {
		ops  int
		mem  int64
		heap uint64
	}
	measure := func(ops int) sample {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return sample{ops, usedMemory(t, d), ms.HeapInuse}
	}
	window := 10 * time.Second
	var first, last sample
	start := time.Now()
	ops, errCount := 0, 0
	winStart, winOps := time.Now(), 0
	for time.Since(start) < dur {
		y := x.Reshape(256, 256).MatMul(w).ReLU().Sum()
		z := x.Mul(1.5).Add(0.5).Softmax(0)
		if _, err := y.Item(); err != nil {
			errCount++
			t.Error(err)
		}
		if err := z.Err(); err != nil {
			errCount++
			t.Error(err)
		}
		z.Close()
		ops++
		if time.Since(winStart) >= window {
			s := measure(ops - winOps)
			rate := float64(s.ops) / time.Since(winStart).Seconds()
			if first.ops == 0 {
				first = s
				t.Logf("start: %.0f steps/s, device used %d bytes, heap %d bytes", rate, s.mem, s.heap)
			}
			last = s
			t.Logf("%v: %.0f steps/s, device used %d bytes, heap %d bytes", time.Since(start).Round(time.Second), rate, s.mem, s.heap)
			winStart, winOps = time.Now(), ops
		}
	}
	t.Logf("probe: soak of %v: %d steps, %d errors; device memory %d -> %d bytes, heap %d -> %d bytes",
		dur, ops, errCount, first.mem, last.mem, first.heap, last.heap)
	if last.mem > first.mem+(64<<20) {
		t.Errorf("device memory grew during the soak: %d -> %d", first.mem, last.mem)
	}
}

// findLibc returns the path of the C library, a real shared library that
// is none of NVIDIA's.
func findLibc(t *testing.T) string {
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib64/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no libc.so.6 found to stand in for a wrong library")
	return ""
}

// TestWrongLibrary points GOCU_CUDA_LIB, GOCU_NVRTC_LIB and GOCU_CUBLAS_LIB
// at another shared library (libc): each gives a clear error naming the
// file, in a child process that must not crash. It runs with or without a
// GPU.
func TestWrongLibrary(t *testing.T) {
	if v := os.Getenv("GOCU_TEST_CHILD"); strings.HasPrefix(v, "wronglib") {
		wrongLibChild(v)
		return
	}
	libc := findLibc(t)
	for _, env := range []string{"GOCU_CUDA_LIB", "GOCU_NVRTC_LIB", "GOCU_CUBLAS_LIB"} {
		t.Run(env, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestWrongLibrary$", "-test.v")
			cmd.Env = append(os.Environ(), "GOCU_TEST_CHILD=wronglib-"+env, env+"="+libc)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the child crashed or failed: %v\n%s", err, out)
			}
			s := string(out)
			if !strings.Contains(s, "FAILED CLEANLY") || !strings.Contains(s, libc) {
				t.Errorf("child output for %s=%s:\n%s", env, libc, s)
			}
		})
	}
}

func wrongLibChild(which string) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Printf("PANIC %v\n", p)
			os.Exit(1)
		}
	}()
	var err error
	switch strings.TrimPrefix(which, "wronglib-") {
	case "GOCU_CUDA_LIB":
		_, err = gocu.Open("cuda:0")
		if err == nil {
			err = errors.New("opened a GPU through libc")
		}
	case "GOCU_NVRTC_LIB":
		err = nvrtc.Load()
		if err == nil {
			err = errors.New("NVRTC loaded from libc")
		}
	case "GOCU_CUBLAS_LIB":
		x := array.On(gocu.MustOpen("cpu")).Ones(array.Float32, 4, 4)
		if err := x.MatMul(x).Err(); err != nil { // the CPU needs no cuBLAS
			fmt.Println("CPU MATMUL", err)
		}
		d, oerr := gocu.Open("cuda:0")
		if oerr != nil {
			// No GPU here: load cuBLAS directly.
			err = cublasLoadError()
		} else {
			m := array.On(d)
			x := m.Ones(array.Float32, 4, 4)
			err = x.MatMul(x).Err()
		}
		if err == nil {
			err = errors.New("cuBLAS loaded from libc")
		}
	}
	fmt.Printf("ERROR %v\n", err)
	if err != nil && !strings.Contains(err.Error(), "loaded from libc") {
		fmt.Println("FAILED CLEANLY")
	}
}

func cublasLoadError() error { return cublas.Load() }
