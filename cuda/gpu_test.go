package cuda_test

// Tests on a real GPU. They skip, saying why, where no CUDA driver or
// device is found. The kernels are testdata/kernels.ptx (generated from
// testdata/kernels.cu), JIT-compiled by the driver for the GPU present.

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
)

//go:embed testdata/kernels.ptx
var kernelsPTX string

var (
	modOnce sync.Once
	mod     *cuda.Module
	modErr  error
)

// device returns device 0, or skips the test when there is none.
func device(t testing.TB) *cuda.Device {
	t.Helper()
	gputest.Need(t, cuda.Init())
	d, err := cuda.DeviceAt(0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// kernel returns a test kernel, loading the module once per process.
func kernel(t testing.TB, name string) *cuda.Function {
	t.Helper()
	d := device(t)
	modOnce.Do(func() { mod, modErr = d.LoadPTX(kernelsPTX) })
	if modErr != nil {
		t.Fatalf("loading the test kernels: %v", modErr)
	}
	f, err := mod.Function(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func randFloats(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = rng.Float32()*2 - 1
	}
	return x
}

func upload[T any](t testing.TB, d *cuda.Device, x []T) *cuda.Memory {
	t.Helper()
	m, err := cuda.AllocSlice[T](d, len(x))
	must(t, err)
	must(t, cuda.CopyHtoD(m, x))
	// A pageable copy may return before its DMA lands; kernels on
	// non-blocking streams are not ordered after it.
	must(t, d.Synchronize())
	return m
}

func TestDeviceProps(t *testing.T) {
	d := device(t)
	p := d.Props()
	v, err := cuda.DriverVersion()
	must(t, err)
	lib, err := cuda.LibraryPath()
	must(t, err)
	t.Logf("%v: driver %d from %s; %d SMs, %.1f GiB, L2 %d KiB, smem/block %d (opt-in %d), clock %d kHz, memory %d kHz x %d bits = %.0f GB/s; unavailable: %v",
		d, v, lib, p.Multiprocessors, float64(p.TotalMemory)/(1<<30), p.L2CacheSize>>10,
		p.SharedMemPerBlock, p.SharedMemPerBlockOptin, p.ClockKHz, p.MemoryClockKHz, p.MemoryBusWidth, p.Bandwidth()/1e9, p.Unavailable)
	if p.Name == "" || p.Major < 3 || p.Multiprocessors <= 0 || p.TotalMemory <= 0 || p.MaxThreadsPerBlock != 1024 ||
		p.WarpSize != 32 || p.SharedMemPerBlock < 48<<10 || p.SharedMemPerBlockOptin < p.SharedMemPerBlock || p.MaxGridDim[0] < 1<<30 {
		t.Errorf("implausible properties: %+v", p)
	}
	if p.MemoryBusWidth > 0 && p.MemoryClockKHz > 0 && p.Bandwidth() < 50e9 {
		t.Errorf("theoretical bandwidth %.0f GB/s", p.Bandwidth()/1e9)
	}
	if v < 11040 {
		t.Errorf("driver version %d", v)
	}
	free, total, err := d.MemInfo()
	must(t, err)
	if free <= 0 || free > total || total != p.TotalMemory {
		t.Errorf("MemInfo free %d total %d (props %d)", free, total, p.TotalMemory)
	}
	n, err := cuda.DeviceCount()
	must(t, err)
	ds, err := cuda.Devices()
	must(t, err)
	if len(ds) != n || ds[0] != d {
		t.Errorf("Devices: %d of %d", len(ds), n)
	}
	if _, err := cuda.DeviceAt(n); !errors.Is(err, cuda.ErrInvalidDevice) {
		t.Errorf("DeviceAt(%d): %v", n, err)
	}
	if d.Arch() != fmt.Sprintf("sm_%d%d", p.Major, p.Minor) {
		t.Errorf("Arch %s", d.Arch())
	}
}

// TestVectorAdd2e26 adds 2^26 random float32 on the GPU and compares with
// the CPU, element by element.
func TestVectorAdd2e26(t *testing.T) {
	d := device(t)
	vadd := kernel(t, "vadd")
	const n = 1 << 26
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	a, b := randFloats(rng, n), randFloats(rng, n)
	da, db := upload(t, d, a), upload(t, d, b)
	dc, err := cuda.AllocSlice[float32](d, n)
	must(t, err)
	defer func() { must(t, da.Free()); must(t, db.Free()); must(t, dc.Free()) }()
	must(t, dc.MemsetD32(math.Float32bits(float32(math.NaN())))) // poison: an element not written fails
	must(t, vadd.Launch(cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}}, da, db, dc, int32(n)))
	c := make([]float32, n)
	must(t, cuda.CopyDtoH(c, dc))
	bad := 0
	for i := range c {
		want := a[i] + b[i] // IEEE single addition, as add.f32 does
		if c[i] != want {
			if bad < 5 {
				t.Errorf("c[%d] = %g, want %g + %g = %g", i, c[i], a[i], b[i], want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, n)
	}
}

// TestPlantedOutOfBounds runs a kernel that writes outside its buffer in
// launch-blocking mode, in a child process because the error is sticky: the
// launch must report CUDA_ERROR_ILLEGAL_ADDRESS naming the kernel and the Go
// line that launched it, and later calls must say the context is lost.
func TestPlantedOutOfBounds(t *testing.T) {
	device(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestPlantedOutOfBoundsChild$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCU_TEST_CHILD=oob", "GOCU_LAUNCH_BLOCKING=1")
	out, err := cmd.CombinedOutput()
	s := string(out)
	t.Logf("child output:\n%s", s)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	for _, want := range []string{
		"LAUNCH-ERR: cuda: kernel oob<<<(1,1,1), (1,1,1), 0>>> launched at ", "gpu_test.go:",
		"CUDA_ERROR_ILLEGAL_ADDRESS", "restart the process",
		"IS-ILLEGAL-ADDRESS=true", "IS-CONTEXT-LOST=true", "IS-LAUNCH-ERROR=true", "LATER-CONTEXT-LOST=true",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("child output lacks %q", want)
		}
	}
}

func TestPlantedOutOfBoundsChild(t *testing.T) {
	if os.Getenv("GOCU_TEST_CHILD") != "oob" {
		t.Skip("run by TestPlantedOutOfBounds in a child process")
	}
	if !cuda.LaunchBlocking() {
		t.Fatal("GOCU_LAUNCH_BLOCKING=1 was not honoured")
	}
	d := device(t)
	oob := kernel(t, "oob")
	m, err := d.Alloc(1024)
	must(t, err)
	err = oob.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, m, int64(1)<<40) // writes 1 TiB past m
	var le *cuda.LaunchError
	fmt.Printf("LAUNCH-ERR: %v\n", err)
	fmt.Printf("IS-ILLEGAL-ADDRESS=%v\nIS-CONTEXT-LOST=%v\nIS-LAUNCH-ERROR=%v\n",
		errors.Is(err, cuda.ErrIllegalAddress), errors.Is(err, cuda.ErrContextLost), errors.As(err, &le) && le.Kernel == "oob")
	later := d.Synchronize()
	fmt.Printf("LATER: %v\nLATER-CONTEXT-LOST=%v\n", later, errors.Is(later, cuda.ErrContextLost))
}

// TestOutOfMemory allocates past the device's memory: the error matches
// ErrOutOfMemory, and allocation works again afterwards.
func TestOutOfMemory(t *testing.T) {
	d := device(t)
	_, total, err := d.MemInfo()
	must(t, err)
	_, err = d.Alloc(int(total) + 1<<30)
	if !errors.Is(err, cuda.ErrOutOfMemory) {
		t.Fatalf("allocating more than the device holds: %v", err)
	}
	t.Logf("one allocation past the device: %v", err)
	// Fill the device with 1 GiB blocks until it is full.
	var held []*cuda.Memory
	defer func() {
		for _, m := range held {
			must(t, m.Free())
		}
		_, err := d.Allocator().Trim()
		must(t, err)
	}()
	for i := 0; ; i++ {
		m, err := d.Alloc(1 << 30)
		if err != nil {
			if !errors.Is(err, cuda.ErrOutOfMemory) {
				t.Fatalf("after %d GiB: %v", i, err)
			}
			t.Logf("full after %d GiB: %v", i, err)
			break
		}
		held = append(held, m)
		if i > int(total>>30)+2 {
			t.Fatalf("allocated %d GiB of a %d GiB device without an error", i, total>>30)
		}
	}
	must(t, held[len(held)-1].Free())
	must(t, held[len(held)-2].Free())
	held = held[:len(held)-2]
	m, err := d.Alloc(1 << 30) // works again
	must(t, err)
	held = append(held, m)
	must(t, m.MemsetD8(7))
	must(t, d.Synchronize())
}

// TestAllocFreeCycles runs 100,000 allocation/free cycles of mixed sizes
// (some held while others come and go) and checks that, after Trim, the
// device's free memory is where it started.
func TestAllocFreeCycles(t *testing.T) {
	d := device(t)
	a := d.Allocator()
	_, err := a.Trim()
	must(t, err)
	free0, _, err := d.MemInfo()
	must(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	var held []*cuda.Memory
	before := a.Stats()
	for i := range 100_000 {
		n := 1 + rng.IntN(64<<10)
		switch rng.IntN(20) {
		case 0:
			n = 1 + rng.IntN(64<<20)
		case 1:
			n = 1 + rng.IntN(4<<20)
		}
		m, err := d.Alloc(n)
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		held = append(held, m)
		for len(held) > 16 || (len(held) > 0 && rng.IntN(2) == 0) {
			j := rng.IntN(len(held))
			must(t, held[j].Free())
			held = slices.Delete(held, j, j+1)
		}
	}
	for _, m := range held {
		must(t, m.Free())
	}
	st := a.Stats()
	t.Logf("allocator after 100,000 cycles: %v", st)
	if st.InUse != before.InUse || st.Allocs-before.Allocs != 100_000 || st.Frees-before.Frees != 100_000 {
		t.Errorf("stats do not balance: before %+v after %+v", before, st)
	}
	if a.Caching() && st.Hits-before.Hits < 90_000 {
		t.Errorf("only %d of 100,000 allocations came from the cache", st.Hits-before.Hits)
	}
	_, err = a.Trim()
	must(t, err)
	free1, _, err := d.MemInfo()
	must(t, err)
	if diff := free0 - free1; diff > 8<<20 || diff < -(8<<20) {
		t.Errorf("device free memory moved by %d bytes (%d -> %d)", diff, free0, free1)
	}
}

// TestPlainAllocator reruns the vector add and alloc/free cycles with
// GOCU_ALLOCATOR=plain in a child process.
func TestPlainAllocator(t *testing.T) {
	if os.Getenv("GOCU_TEST_CHILD") == "plain" {
		d := device(t)
		if d.Allocator().Caching() {
			t.Fatal("GOCU_ALLOCATOR=plain was not honoured")
		}
		free0, _, err := d.MemInfo()
		must(t, err)
		st0 := d.Allocator().Stats()
		for i := range 10_000 {
			m, err := d.Alloc(1 + i%(1<<20))
			must(t, err)
			must(t, m.Free())
		}
		free1, _, err := d.MemInfo()
		must(t, err)
		if diff := free0 - free1; diff > 4<<20 || diff < -(4<<20) {
			t.Errorf("plain allocator: free memory moved by %d bytes", diff)
		}
		st := d.Allocator().Stats()
		if st.Allocs-st0.Allocs != 10_000 || st.Hits != 0 || st.InUse != 0 {
			t.Errorf("plain stats %+v", st)
		}
		return
	}
	device(t)
	cmd := exec.Command(os.Args[0], "-test.run=^(TestPlainAllocator|TestVectorAdd2e26)$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCU_TEST_CHILD=plain", "GOCU_ALLOCATOR=plain")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPlainAllocator") || !strings.Contains(string(out), "--- PASS: TestVectorAdd2e26") {
		t.Fatalf("child with GOCU_ALLOCATOR=plain: %v\n%s", err, out)
	}
}

// TestConcurrentLaunches has 8 goroutines each launch 1,000 kernels on a
// stream of its own; every result must be exact.
func TestConcurrentLaunches(t *testing.T) {
	d := device(t)
	inc := kernel(t, "inc")
	const n, launches = 1 << 16, 1000
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				s, err := d.NewStream(cuda.StreamNonBlocking)
				if err != nil {
					return err
				}
				defer s.Close()
				rng := rand.New(rand.NewPCG(uint64(g), 99))
				x0 := make([]int32, n)
				for i := range x0 {
					x0[i] = rng.Int32() - 1<<30
				}
				delta := int32(rng.IntN(1000) - 500)
				x, err := d.AllocOn(s, 4*n)
				if err != nil {
					return err
				}
				defer x.Free()
				if err := cuda.CopyHtoDAsync(x, x0, s); err != nil {
					return err
				}
				cfg := cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}, Stream: s}
				for range launches {
					if err := inc.Launch(cfg, x, int32(n), delta); err != nil {
						return err
					}
				}
				got := make([]int32, n)
				if err := cuda.CopyDtoHAsync(got, x, s); err != nil {
					return err
				}
				if err := s.Synchronize(); err != nil {
					return err
				}
				for i := range got {
					if want := x0[i] + launches*delta; got[i] != want {
						return fmt.Errorf("goroutine %d: x[%d] = %d, want %d", g, i, got[i], want)
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestGraphReplay captures ten launches into a graph, replays it and
// checks the result, then updates the graph's parameters and replays again.
func TestGraphReplay(t *testing.T) {
	d := device(t)
	inc := kernel(t, "inc")
	s, err := d.NewStream(cuda.StreamNonBlocking)
	must(t, err)
	defer s.Close()
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(5, 6))
	x0 := make([]int32, n)
	for i := range x0 {
		x0[i] = rng.Int32N(1 << 20)
	}
	x := upload(t, d, x0)
	defer x.Free()
	capture := func(delta int32) *cuda.Graph {
		g, err := s.Capture(cuda.CaptureRelaxed, func(s *cuda.Stream) error {
			for range 10 {
				if err := inc.Launch(cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}, Stream: s}, x, int32(n), delta); err != nil {
					return err
				}
			}
			return nil
		})
		must(t, err)
		return g
	}
	g := capture(3)
	defer g.Close()
	nodes, err := g.Nodes()
	must(t, err)
	if nodes != 10 {
		t.Errorf("graph has %d nodes, want 10", nodes)
	}
	ge, err := g.Instantiate()
	must(t, err)
	defer ge.Close()
	must(t, ge.Upload(s))
	check := func(total int32) {
		t.Helper()
		got := make([]int32, n)
		must(t, s.Synchronize())
		must(t, cuda.CopyDtoH(got, x))
		for i := range got {
			if got[i] != x0[i]+total {
				t.Fatalf("x[%d] = %d, want %d", i, got[i], x0[i]+total)
			}
		}
	}
	check(0) // capturing ran nothing
	for range 5 {
		must(t, ge.Launch(s))
	}
	check(5 * 10 * 3)
	g2 := capture(-7)
	defer g2.Close()
	must(t, ge.Update(g2))
	for range 3 {
		must(t, ge.Launch(s))
	}
	check(150 - 3*10*7)
	if err := d.DefaultStream().BeginCapture(cuda.CaptureRelaxed); !errors.Is(err, cuda.ErrCaptureUnsupported) {
		t.Errorf("capture on the default stream: %v", err)
	}
}

// TestPinnedFasterThanPageable times a 256 MiB host-to-device copy from
// ordinary Go memory and from pinned memory with events.
func TestPinnedFasterThanPageable(t *testing.T) {
	d := device(t)
	const n = 64 << 20 // float32s: 256 MiB
	src := randFloats(rand.New(rand.NewPCG(7, 8)), n)
	pinned, err := d.AllocHost(4 * n)
	must(t, err)
	defer pinned.Free()
	copy(cuda.HostSlice[float32](pinned), src)
	dst, err := cuda.AllocSlice[float32](d, n)
	must(t, err)
	defer dst.Free()
	s, err := d.NewStream(cuda.StreamNonBlocking)
	must(t, err)
	defer s.Close()
	start, err := d.NewEvent(cuda.EventDefault)
	must(t, err)
	end, err := d.NewEvent(cuda.EventDefault)
	must(t, err)
	timeCopy := func(from []float32) time.Duration {
		var ts []time.Duration
		for range 5 {
			must(t, start.Record(s))
			must(t, cuda.CopyHtoDAsync(dst, from, s))
			must(t, end.Record(s))
			must(t, end.Synchronize())
			dt, err := cuda.Elapsed(start, end)
			must(t, err)
			ts = append(ts, dt)
		}
		slices.Sort(ts)
		return ts[len(ts)/2]
	}
	pageable := timeCopy(src)
	pin := timeCopy(cuda.HostSlice[float32](pinned))
	gbs := func(dt time.Duration) float64 { return 4 * n / dt.Seconds() / 1e9 }
	t.Logf("256 MiB host to device: pageable %v (%.1f GB/s), pinned %v (%.1f GB/s)", pageable, gbs(pageable), pin, gbs(pin))
	if pin >= pageable {
		t.Errorf("pinned copy (%v) is not faster than pageable (%v)", pin, pageable)
	}
	back := make([]float32, n)
	must(t, cuda.CopyDtoH(back, dst))
	if !slices.Equal(back, src) {
		t.Error("the copied data differ")
	}
}

func TestUseAfterFree(t *testing.T) {
	d := device(t)
	vadd := kernel(t, "vadd")
	m, err := d.Alloc(4096)
	must(t, err)
	must(t, m.Free())
	cfg := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}
	for name, err := range map[string]error{
		"Free":     m.Free(),
		"Launch":   vadd.Launch(cfg, m, m, m, int32(32)),
		"CopyHtoD": cuda.CopyHtoD(m, []float32{1}),
		"CopyDtoH": cuda.CopyDtoH(make([]float32, 1), m),
		"CopyDtoD": cuda.CopyDtoD(m, m, 4),
		"Memset":   m.MemsetD32Async(1, nil),
	} {
		if !errors.Is(err, cuda.ErrFreed) {
			t.Errorf("%s after Free: %v", name, err)
		}
	}
	h, err := d.AllocHost(64)
	must(t, err)
	must(t, h.Free())
	if err := h.Free(); !errors.Is(err, cuda.ErrFreed) || h.Bytes() != nil {
		t.Errorf("HostMemory double free: %v", err)
	}
	must(t, d.Synchronize()) // nothing reached the driver
}

func TestLaunchConfigErrors(t *testing.T) {
	revdyn := kernel(t, "revdyn")
	d := revdyn.Device()
	x, err := d.Alloc(4 * 1024)
	must(t, err)
	defer x.Free()
	for _, c := range []struct {
		cfg  cuda.Config
		want string
	}{
		{cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 2048}}, "Block.X is 2048"},
		{cuda.Config{Grid: cuda.Dim3{X: 0}, Block: cuda.Dim3{X: 32}}, "grid is empty"},
		{cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32, Y: 32, Z: 2}}, "2048 threads"},
		{cuda.Config{Grid: cuda.Dim3{X: 1, Y: 1 << 20}, Block: cuda.Dim3{X: 32}}, "Grid.Y is 1048576"},
		{cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}, SharedMem: 1 << 30}, "the device allows at most"},
		{cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 256}, SharedMem: 64 << 10}, "SetMaxDynamicSharedMemory"},
	} {
		err := revdyn.Launch(c.cfg, x)
		if !errors.Is(err, cuda.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v (want %q)", c.cfg, err, c.want)
		}
	}
	if err := revdyn.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, 7); !errors.Is(err, cuda.ErrInvalidArg) {
		t.Errorf("Go int: %v", err)
	}
	// Opting in to 64 KiB of dynamic shared memory makes the launch valid.
	if d.Props().SharedMemPerBlockOptin >= 64<<10 {
		must(t, revdyn.SetMaxDynamicSharedMemory(64<<10))
		rng := rand.New(rand.NewPCG(9, 9))
		x0 := randFloats(rng, 1024)
		must(t, cuda.CopyHtoD(x, x0))
		must(t, revdyn.Launch(cuda.Config{Grid: cuda.Dim3{X: 4}, Block: cuda.Dim3{X: 256}, SharedMem: 64 << 10}, x))
		got := make([]float32, 1024)
		must(t, cuda.CopyDtoH(got, x))
		for i := range got {
			if want := x0[i/256*256+255-i%256]; got[i] != want {
				t.Fatalf("revdyn: x[%d] = %g, want %g", i, got[i], want)
			}
		}
	}
	if err := revdyn.SetMaxDynamicSharedMemory(1 << 30); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("SetMaxDynamicSharedMemory(1 GiB): %v", err)
	}
}

func TestInOut(t *testing.T) {
	saxpy, vadd := kernel(t, "saxpy"), kernel(t, "vadd")
	const n = 100_000
	rng := rand.New(rand.NewPCG(11, 12))
	x, y := randFloats(rng, n), randFloats(rng, n)
	y0 := slices.Clone(y)
	const a = float32(1.75)
	cfg := cuda.Config{Grid: cuda.GridFor(n, 128), Block: cuda.Dim3{X: 128}}
	must(t, saxpy.Call(cfg, a, cuda.In(x), cuda.InOut(y), int32(n)))
	for i := range y {
		want := float64(a)*float64(x[i]) + float64(y0[i])
		if math.Abs(float64(y[i])-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("y[%d] = %g, want %g", i, y[i], want)
		}
	}
	c := make([]float32, n)
	for i := range c {
		c[i] = float32(math.NaN())
	}
	must(t, vadd.Call(cfg, cuda.In(x), cuda.In(y0), cuda.Out(c), int32(n)))
	for i := range c {
		if c[i] != x[i]+y0[i] {
			t.Fatalf("c[%d] = %g, want %g", i, c[i], x[i]+y0[i])
		}
	}
	if err := vadd.Launch(cfg, cuda.In(x), cuda.In(y0), cuda.Out(c), int32(n)); !errors.Is(err, cuda.ErrInvalidArg) {
		t.Errorf("In/Out with Launch: %v", err)
	}
}

func TestMemset(t *testing.T) {
	d := device(t)
	m, err := d.Alloc(1 << 20)
	must(t, err)
	defer m.Free()
	s, err := d.NewStream(cuda.StreamDefault)
	must(t, err)
	defer s.Close()
	b := make([]byte, 1<<20)
	check := func(name string, want func(i int) byte) {
		t.Helper()
		must(t, d.Synchronize())
		must(t, cuda.CopyDtoH(b, m))
		for i := range b {
			if b[i] != want(i) {
				t.Fatalf("%s: byte %d = %#x, want %#x", name, i, b[i], want(i))
			}
		}
	}
	must(t, m.MemsetD8(0xa5))
	check("MemsetD8", func(int) byte { return 0xa5 })
	must(t, m.MemsetD16(0x1234))
	check("MemsetD16", func(i int) byte { return [2]byte{0x34, 0x12}[i%2] })
	must(t, m.MemsetD32(0xdeadbeef))
	check("MemsetD32", func(i int) byte { return [4]byte{0xef, 0xbe, 0xad, 0xde}[i%4] })
	must(t, m.MemsetD8Async(0x3c, s))
	must(t, s.Synchronize())
	check("MemsetD8Async", func(int) byte { return 0x3c })
	must(t, m.MemsetD16Async(0xbeef, s))
	must(t, s.Synchronize())
	check("MemsetD16Async", func(i int) byte { return [2]byte{0xef, 0xbe}[i%2] })
	v, err := m.View(4096, 8192)
	must(t, err)
	must(t, v.MemsetD32Async(0x01020304, s))
	must(t, s.Synchronize())
	check("MemsetD32Async on a view", func(i int) byte {
		if i >= 4096 && i < 4096+8192 {
			return [4]byte{4, 3, 2, 1}[i%4]
		}
		return [2]byte{0xef, 0xbe}[i%2]
	})
}

func TestEventsAndStreams(t *testing.T) {
	d := device(t)
	vadd := kernel(t, "vadd")
	const n = 1 << 24
	rng := rand.New(rand.NewPCG(13, 14))
	a := randFloats(rng, n)
	da := upload(t, d, a)
	defer da.Free()
	dc, err := cuda.AllocSlice[float32](d, n)
	must(t, err)
	defer dc.Free()
	s1, err := d.NewStream(cuda.StreamNonBlocking)
	must(t, err)
	defer s1.Close()
	s2, err := d.NewStreamWithPriority(cuda.StreamNonBlocking, -1)
	must(t, err)
	defer s2.Close()
	start, err := d.NewEvent(cuda.EventDefault)
	must(t, err)
	defer start.Close()
	end, err := d.NewEvent(cuda.EventBlockingSync)
	must(t, err)
	defer end.Close()
	must(t, start.Record(s1))
	for range 20 {
		must(t, vadd.Launch(cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}, Stream: s1}, da, da, dc, int32(n)))
	}
	must(t, end.Record(s1))
	// s2 doubles c only after s1 has written it.
	must(t, s2.WaitEvent(end))
	must(t, vadd.Launch(cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}, Stream: s2}, dc, dc, dc, int32(n)))
	must(t, s2.Synchronize())
	done, err := end.Query()
	must(t, err)
	idle, err := s1.Query()
	must(t, err)
	if !done || !idle {
		t.Errorf("after s2 waited on the event: event done %v, s1 idle %v", done, idle)
	}
	dt, err := cuda.Elapsed(start, end)
	must(t, err)
	t.Logf("20 adds of 2^24 floats: %v (%.0f GB/s)", dt, 20*3*4*n/dt.Seconds()/1e9)
	if dt <= 0 || dt > 10*time.Second {
		t.Errorf("elapsed %v", dt)
	}
	c := make([]float32, n)
	must(t, cuda.CopyDtoH(c, dc))
	for i := range c {
		if c[i] != 4*a[i] {
			t.Fatalf("c[%d] = %g, want %g", i, c[i], 4*a[i])
		}
	}
	quiet, err := d.NewEvent(cuda.EventDisableTiming)
	must(t, err)
	defer quiet.Close()
	must(t, quiet.Record(nil))
	must(t, quiet.Synchronize())
	if _, err := cuda.Elapsed(start, quiet); !errors.Is(err, cuda.ErrInvalidValue) {
		t.Errorf("Elapsed with a timing-disabled event: %v", err)
	}
	must(t, d.DefaultStream().Synchronize())
	if err := d.DefaultStream().Close(); err == nil {
		t.Error("closing the default stream must fail")
	}
}

func TestFunctionAttributes(t *testing.T) {
	rev := kernel(t, "rev256")
	d := rev.Device()
	fa, err := rev.Attributes()
	must(t, err)
	t.Logf("rev256: %+v", fa)
	major, minor := d.ComputeCapability()
	if fa.SharedSizeBytes != 1024 || fa.NumRegs <= 0 || fa.MaxThreadsPerBlock < 256 || fa.PTXVersion != 52 ||
		fa.BinaryVersion != 10*major+minor || fa.LocalSizeBytes != 0 {
		t.Errorf("attributes %+v", fa)
	}
	block, grid, err := rev.SuggestedBlockSize(0)
	must(t, err)
	if block < 32 || block > 1024 || block%32 != 0 || grid < d.Props().Multiprocessors {
		t.Errorf("SuggestedBlockSize = %d, min grid %d", block, grid)
	}
	active, err := rev.MaxActiveBlocksPerSM(256, 0)
	must(t, err)
	if active < 1 || active > 64 {
		t.Errorf("MaxActiveBlocksPerSM(256) = %d", active)
	}
	t.Logf("occupancy: block %d, grid %d, %d blocks of 256 per SM", block, grid, active)
	// The kernel's work: each block of 256 reversed.
	x0 := randFloats(rand.New(rand.NewPCG(15, 16)), 4096)
	x := upload(t, d, x0)
	defer x.Free()
	must(t, rev.Launch(cuda.Config{Grid: cuda.Dim3{X: 16}, Block: cuda.Dim3{X: 256}}, x))
	got := make([]float32, 4096)
	must(t, cuda.CopyDtoH(got, x))
	for i := range got {
		if want := x0[i/256*256+255-i%256]; got[i] != want {
			t.Fatalf("rev256: x[%d] = %g, want %g", i, got[i], want)
		}
	}
}

type affine struct {
	Scale float32
	Shift float64
	N     int32
}

func TestStructArgument(t *testing.T) {
	f := kernel(t, "affine")
	d := f.Device()
	const n = 10_000
	in := randFloats(rand.New(rand.NewPCG(17, 18)), n)
	din := upload(t, d, in)
	defer din.Free()
	out, err := cuda.AllocSlice[float64](d, n+10)
	must(t, err)
	defer out.Free()
	p := affine{Scale: 3.5, Shift: -1.25, N: n}
	raw, err := cuda.Value(p)
	must(t, err)
	for _, arg := range []any{p, raw} {
		must(t, out.MemsetD8(0xff)) // NaN everywhere
		must(t, f.Launch(cuda.Config{Grid: cuda.GridFor(n+10, 128), Block: cuda.Dim3{X: 128}}, arg, din, out))
		got := make([]float64, n+10)
		must(t, cuda.CopyDtoH(got, out))
		for i := range n {
			if want := float64(p.Scale*in[i]) + p.Shift; got[i] != want {
				t.Fatalf("%T: out[%d] = %g, want %g", arg, i, got[i], want)
			}
		}
		for i := n; i < n+10; i++ {
			if !math.IsNaN(got[i]) {
				t.Fatalf("out[%d] past p.N was written", i)
			}
		}
	}
}

func TestJITErrorLog(t *testing.T) {
	mod := kernel(t, "vadd").Module()
	d := mod.Device()
	_, err := d.LoadPTX(".version 4.2\n.target sm_52\n.address_size 64\n.visible .entry broken()\n{\n\tnot_an_instruction %r1;\n\tret;\n}\n")
	var me *cuda.ModuleError
	if !errors.As(err, &me) || !errors.Is(err, cuda.ErrInvalidPTX) {
		t.Fatalf("broken PTX: %v", err)
	}
	if !strings.Contains(me.Log, "error") {
		t.Errorf("the JIT log says nothing: %q", me.Log)
	}
	t.Logf("%v", err)
	if _, err := mod.Function("no_such_kernel"); !errors.Is(err, cuda.ErrNotFound) {
		t.Errorf("missing kernel: %v", err)
	}
}

func TestModuleUnload(t *testing.T) {
	d := device(t)
	m, err := d.LoadPTX(kernelsPTX)
	must(t, err)
	f, err := m.Function("inc1")
	must(t, err)
	x, err := d.Alloc(4)
	must(t, err)
	defer x.Free()
	must(t, f.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, x))
	must(t, d.Synchronize())
	must(t, m.Unload())
	if err := f.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, x); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("launch after Unload: %v", err)
	}
	if _, err := m.Function("inc1"); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Function after Unload: %v", err)
	}
	if err := m.Unload(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("second Unload: %v", err)
	}
}

// TestGarbageCollectorBackstop drops memory without Free: the collector's
// cleanup returns it to the allocator, from whatever goroutine it runs on.
func TestGarbageCollectorBackstop(t *testing.T) {
	d := device(t)
	a := d.Allocator()
	before := a.Stats().InUse
	func() {
		for range 10 {
			m, err := d.Alloc(1 << 20)
			must(t, err)
			_ = m
		}
	}()
	if a.Stats().InUse < before+10<<20 {
		t.Fatal("allocations not counted")
	}
	deadline := time.Now().Add(5 * time.Second)
	for a.Stats().InUse > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := a.Stats().InUse; got > before {
		t.Errorf("in use %d bytes after GC, was %d before", got, before)
	}
	must(t, d.Synchronize())
}

// TestWithContext runs code on a locked thread with the context current.
func TestWithContext(t *testing.T) {
	d := device(t)
	ran := false
	must(t, d.WithContext(func() error { ran = true; return nil }))
	if !ran || d.Context() == 0 {
		t.Error("WithContext did not run")
	}
}
