package prof_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nvrtc"
	"github.com/gocu-dev/gocu/prof"
)

const scaleSrc = `extern "C" __global__ void scale(float* x, float a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}`

// gpuKernel compiles scaleSrc for the first GPU, or skips the test.
func gpuKernel(t *testing.T) (*cuda.Device, *cuda.Function) {
	t.Helper()
	gputest.Need(t, cuda.Init())
	gputest.Need(t, nvrtc.Load())
	d, err := cuda.DeviceAt(0)
	if err != nil {
		t.Fatal(err)
	}
	target, err := nvrtc.TargetFor(d.ComputeCapability())
	if err != nil {
		t.Fatal(err)
	}
	res, err := nvrtc.Compile(scaleSrc, nvrtc.Options{Arch: target, Name: "scale.cu"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.LoadModule(res.Code)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unload() })
	f, err := m.Function("scale")
	if err != nil {
		t.Fatal(err)
	}
	return d, f
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGPUProfile profiles copies, launches on a stream, a memset, a
// captured launch and a graph replay, and checks names, shapes, bytes and
// that the durations agree with an independent CUDA-event measurement.
func TestGPUProfile(t *testing.T) {
	d, f := gpuKernel(t)
	const n = 1 << 24
	const launches = 6
	r := rand.New(rand.NewPCG(3, 4))
	host := make([]float32, n)
	for i := range host {
		host[i] = r.Float32() + 0.5
	}
	m, err := d.Alloc(4 * n)
	check(t, err)
	defer m.Free()
	m2, err := d.Alloc(4 * n)
	check(t, err)
	defer m2.Free()
	s, err := d.NewStream(cuda.StreamNonBlocking)
	check(t, err)
	defer s.Close()
	cfg := cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}, Stream: s}

	// A reference time for one launch, measured with our own events
	// (after a warm-up) while profiling is off.
	check(t, cuda.CopyHtoD(m2, host))
	start, err := d.NewEvent(cuda.EventDefault)
	check(t, err)
	defer start.Close()
	end, err := d.NewEvent(cuda.EventDefault)
	check(t, err)
	defer end.Close()
	var ref []time.Duration
	for range 5 {
		check(t, start.Record(s))
		check(t, f.Launch(cfg, m2, float32(1), int32(n)))
		check(t, end.Record(s))
		check(t, end.Synchronize())
		e, err := cuda.Elapsed(start, end)
		check(t, err)
		ref = append(ref, e)
	}
	slices.Sort(ref)

	check(t, prof.Start())
	stopped := false
	defer func() {
		if !stopped {
			prof.Stop()
		}
	}()
	check(t, cuda.CopyHtoD(m, host))
	check(t, d.Synchronize()) // s does not wait for the default stream
	for range launches {
		check(t, f.Launch(cfg, m, float32(1.5), int32(n)))
	}
	got := make([]float32, n)
	check(t, cuda.CopyDtoHAsync(got, m, s))
	check(t, cuda.CopyDtoDAsync(m2, m, 4*n, s))
	check(t, m2.MemsetD32Async(0, s))
	g, err := s.Capture(cuda.CaptureRelaxed, func(s *cuda.Stream) error {
		return f.Launch(cuda.Config{Grid: cfg.Grid, Block: cfg.Block, Stream: s}, m2, float32(2), int32(n))
	})
	check(t, err)
	defer g.Close()
	x, err := g.Instantiate()
	check(t, err)
	defer x.Close()
	check(t, x.Launch(s))
	check(t, s.Synchronize())
	p, err := prof.Stop()
	stopped = true
	check(t, err)

	want := float32(math.Pow(1.5, launches))
	for i := range n {
		if e := math.Abs(float64(got[i]-host[i]*want)) / float64(host[i]*want); e > 1e-5 {
			t.Fatalf("x[%d] = %v, want %v: profiling changed the result", i, got[i], host[i]*want)
		}
	}

	byKind := map[string][]prof.Event{}
	for _, e := range p.Events {
		byKind[e.Kind] = append(byKind[e.Kind], e)
		if e.Device != "cuda:0" {
			t.Errorf("event on device %q: %+v", e.Device, e)
		}
	}
	if len(byKind["kernel"]) != launches+1 || len(byKind["memcpy HtoD"]) != 1 || len(byKind["memcpy DtoH"]) != 1 ||
		len(byKind["memcpy DtoD"]) != 1 || len(byKind["memset"]) != 1 || len(byKind["graph"]) != 1 {
		t.Fatalf("events by kind: %v", counts(byKind))
	}
	h2d := byKind["memcpy HtoD"][0]
	if !h2d.Timed || h2d.Bytes != 4*n || h2d.Stream != "default" || h2d.Duration < 100*time.Microsecond || h2d.Duration > time.Second {
		t.Errorf("host-to-device copy of 64 MiB: %+v", h2d)
	}
	for _, k := range []string{"memcpy DtoH", "memcpy DtoD", "memset"} {
		if e := byKind[k][0]; !e.Timed || e.Bytes != 4*n || e.Stream == "default" || e.Duration <= 0 || e.Duration > time.Second {
			t.Errorf("%s: %+v", k, e)
		}
	}
	var timed []prof.Event
	var captured int
	for _, e := range byKind["kernel"] {
		if e.Name != "scale" || e.Grid != [3]int{n / 256, 1, 1} || e.Block != [3]int{256, 1, 1} || e.Stream == "default" {
			t.Errorf("launch recorded as %+v", e)
		}
		if !e.Timed {
			captured++
			if !strings.Contains(e.Note, "graph") {
				t.Errorf("captured launch: %+v", e)
			}
			continue
		}
		timed = append(timed, e)
	}
	if captured != 1 || len(timed) != launches {
		t.Fatalf("%d timed and %d captured launches", len(timed), captured)
	}
	var durs []time.Duration
	for i, e := range timed {
		durs = append(durs, e.Duration)
		if i > 0 && e.Start+2*time.Microsecond < timed[i-1].Start+timed[i-1].Duration {
			t.Errorf("launch %d starts at %v, before launch %d on the same stream ended at %v", i, e.Start, i-1, timed[i-1].Start+timed[i-1].Duration)
		}
		if e.HostDuration <= 0 || e.HostDuration > 100*time.Millisecond {
			t.Errorf("launch %d took %v on the CPU", i, e.HostDuration)
		}
		if e.Start+50*time.Microsecond < e.HostStart {
			t.Errorf("launch %d started on the GPU at %v, before it was queued at %v", i, e.Start, e.HostStart)
		}
	}
	slices.Sort(durs)
	med, refMed := durs[len(durs)/2], ref[len(ref)/2]
	t.Logf("scale of 2^24 floats: %v in the profile, %v measured directly; host-to-device 64 MiB: %v", med, refMed, h2d.Duration)
	if med < refMed/2 || med > 2*refMed {
		t.Errorf("profiled launch time %v is far from the directly measured %v", med, refMed)
	}
	if e := timed[0]; e.Start+5*time.Microsecond < h2d.Start+h2d.Duration {
		t.Errorf("the first launch started at %v, before the synchronous copy ended at %v", e.Start, h2d.Start+h2d.Duration)
	}
	if gr := byKind["graph"][0]; !gr.Timed || gr.Duration <= 0 || gr.Duration > time.Second {
		t.Errorf("graph replay: %+v", gr)
	}
	if !strings.Contains(p.Devices["cuda:0"], d.Name()) {
		t.Errorf("device description %q", p.Devices["cuda:0"])
	}
	t.Logf("\n%s", p.Table())
	checkTrace(t, p)
}

func counts(m map[string][]prof.Event) map[string]int {
	c := map[string]int{}
	for k, v := range m {
		c[k] = len(v)
	}
	return c
}

// TestGPUProfileNoSync: with profiling on, queuing work does not wait for
// the device. A kernel that spins for 200 ms is launched; the launch and
// the launches after it must return long before it ends.
func TestGPUProfileNoSync(t *testing.T) {
	d, _ := gpuKernel(t)
	target, err := nvrtc.TargetFor(d.ComputeCapability())
	check(t, err)
	res, err := nvrtc.Compile(`extern "C" __global__ void spin(long long cycles, int* out) {
		long long t0 = clock64();
		while (clock64() - t0 < cycles) {}
		out[0] = 1;
	}`, nvrtc.Options{Arch: target})
	check(t, err)
	mod, err := d.LoadModule(res.Code)
	check(t, err)
	defer mod.Unload()
	spin, err := mod.Function("spin")
	check(t, err)
	out, err := d.Alloc(4)
	check(t, err)
	defer out.Free()
	clock := d.Props().ClockKHz // CUDA 13 may not report it
	if clock <= 0 {
		clock = 2_000_000 // above an H100's or H200's boost clock: at least 200 ms
	}
	cycles := int64(clock) * 200 // 200 ms at the reported clock
	check(t, prof.Start())
	t0 := time.Now()
	for range 3 {
		check(t, spin.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, cycles, out))
	}
	queued := time.Since(t0)
	time.Sleep(150 * time.Millisecond) // background collections run meanwhile
	p, err := prof.Stop()
	check(t, err)
	if queued > 100*time.Millisecond {
		t.Errorf("queuing 3 launches of a 200 ms kernel took %v with profiling on: something waited for the device", queued)
	}
	if len(p.Events) != 3 {
		t.Fatalf("%d events", len(p.Events))
	}
	for _, e := range p.Events {
		if !e.Timed || e.Duration < 100*time.Millisecond || e.Duration > 5*time.Second {
			t.Errorf("spin: %+v", e)
		}
	}
}
