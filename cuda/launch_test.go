package cuda

import (
	"errors"
	"strings"
	"testing"
)

func TestDim3(t *testing.T) {
	if d := (Dim3{X: 256}); d.Size() != 256 || d.norm() != (Dim3{256, 1, 1}) || d.String() != "(256,0,0)" {
		t.Errorf("Dim3{X:256}: size %d, norm %v", d.Size(), d.norm())
	}
	if d := (Dim3{4, 5, 6}); d.Size() != 120 {
		t.Errorf("size %d", d.Size())
	}
	for _, c := range []struct {
		n, block int
		want     uint32
	}{{1, 256, 1}, {256, 256, 1}, {257, 256, 2}, {1 << 26, 256, 1 << 18}, {0, 256, 0}} {
		if g := GridFor(c.n, c.block); g.X != c.want {
			t.Errorf("GridFor(%d, %d) = %v, want X=%d", c.n, c.block, g, c.want)
		}
	}
}

// TestCheckLaunch checks configurations against an H100's limits and a
// kernel that uses 1 KiB of static shared memory.
func TestCheckLaunch(t *testing.T) {
	p := fakeProps
	k := kernelLimits{name: "k", maxThreads: 1024, staticShared: 1024, maxDynShared: 47 << 10, numRegs: 32}
	heavy := k
	heavy.maxThreads, heavy.numRegs = 512, 128
	cases := []struct {
		k           kernelLimits
		grid, block Dim3
		shared      int
		want        string // "" for a valid configuration
	}{
		{k, Dim3{1 << 18, 1, 1}, Dim3{256, 1, 1}, 0, ""},
		{k, Dim3{1<<31 - 1, 65535, 65535}, Dim3{32, 32, 1}, 47 << 10, ""},
		{k, Dim3{0, 1, 1}, Dim3{256, 1, 1}, 0, "grid is empty"},
		{k, Dim3{1, 1, 1}, Dim3{0, 1, 1}, 0, "block is empty"},
		{k, Dim3{1, 1, 1}, Dim3{2048, 1, 1}, 0, "Block.X is 2048; the device allows at most 1024"},
		{k, Dim3{1, 1, 1}, Dim3{1, 1, 65}, 0, "Block.Z is 65; the device allows at most 64"},
		{k, Dim3{1, 1, 1}, Dim3{64, 32, 1}, 0, "2048 threads; the device allows at most 1024 per block"},
		{heavy, Dim3{1, 1, 1}, Dim3{1024, 1, 1}, 0, "more than the 512 this kernel can run per block (it uses 128 registers"},
		{k, Dim3{1, 65536, 1}, Dim3{1, 1, 1}, 0, "Grid.Y is 65536; the device allows at most 65535"},
		{k, Dim3{1, 1, 70000}, Dim3{1, 1, 1}, 0, "Grid.Z is 70000"},
		{k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, -1, "negative dynamic shared memory"},
		{k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 227 << 10, "233472 bytes of shared memory (1024 static + 232448 dynamic); the device allows at most 232448"},
		{k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 64 << 10, "exceed the kernel's current limit of 48128; raise it with Function.SetMaxDynamicSharedMemory (up to 231424)"},
	}
	for _, c := range cases {
		got := checkLaunch(&p, c.k, c.grid.norm(), c.block.norm(), c.shared)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("grid %v block %v shared %d: %q, want %q", c.grid, c.block, c.shared, got, c.want)
		}
	}
}

func TestLaunchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	f := FakeFunction(t, "k", 0)
	a, b := FakeMemory(f, 4096), FakeMemory(f, 4096)
	n := int32(1024)
	cfg := Config{Grid: Dim3{X: 4}, Block: Dim3{X: 256}}
	if err := f.Launch(cfg, a, b, n, float32(2)); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := f.Launch(cfg, a, b, n, float32(2)); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Launch allocated %v times per call", allocs)
	}
	SetLaunchBlocking(true)
	defer SetLaunchBlocking(envBool(envBlocking))
	allocs = testing.AllocsPerRun(100, func() {
		if err := f.Launch(cfg, a, b, n, float32(2)); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a blocking Launch allocated %v times per call", allocs)
	}
}

func TestLaunchChecks(t *testing.T) {
	f := FakeFunction(t, "k", 0)
	err := f.Launch(Config{Grid: Dim3{X: 1}, Block: Dim3{X: 4096}}, int32(1))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Kernel != "k" || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("oversized block: %v", err)
	}
	if err := f.Launch(Config{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}, 5); !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("Go int argument: %v", err)
	}
	other := FakeFunction(t, "other", 0)
	s := &Stream{dev: other.dev, handle: 0x55}
	if err := f.Launch(Config{Grid: Dim3{X: 1}, Block: Dim3{X: 1}, Stream: s}); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("stream of another device: %v", err)
	}
	s2 := &Stream{dev: f.dev, handle: 0x66}
	s2.closed.Store(true)
	if err := f.Launch(Config{Grid: Dim3{X: 1}, Block: Dim3{X: 1}, Stream: s2}); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed stream: %v", err)
	}
	f.mod.closed.Store(true)
	if err := f.Launch(Config{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("unloaded module: %v", err)
	}
}

func TestMemoryUseAfterFreeFake(t *testing.T) {
	f := FakeFunction(t, "k", 0)
	m := FakeMemory(f, 1000)
	v, err := m.View(100, 200)
	if err != nil || v.Ptr() != m.Ptr()+100 || v.Size() != 200 {
		t.Fatalf("View: %v %v", v, err)
	}
	if _, err := m.View(900, 200); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("View out of range: %v", err)
	}
	if err := v.Free(); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("Free of a view: %v", err)
	}
	if st := f.dev.alloc.Stats(); st.InUse != 1024 {
		t.Fatalf("in use %d", st.InUse)
	}
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
	if err := m.Free(); !errors.Is(err, ErrFreed) || !strings.Contains(err.Error(), "double free") {
		t.Fatalf("double free: %v", err)
	}
	if !v.Freed() || !m.Freed() {
		t.Fatal("Freed")
	}
	if err := f.Launch(Config{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}, v); !errors.Is(err, ErrFreed) {
		t.Fatalf("launch with a view of freed memory: %v", err)
	}
	if _, err := m.View(0, 1); !errors.Is(err, ErrFreed) {
		t.Fatalf("View after Free: %v", err)
	}
	if err := CopyHtoD(m, []float32{1}); !errors.Is(err, ErrFreed) {
		t.Fatalf("CopyHtoD after Free: %v", err)
	}
	if err := CopyDtoH([]float32{1}, v); !errors.Is(err, ErrFreed) {
		t.Fatalf("CopyDtoH after Free: %v", err)
	}
	if err := m.MemsetD8(1); !errors.Is(err, ErrFreed) {
		t.Fatalf("Memset after Free: %v", err)
	}
	if st := f.dev.alloc.Stats(); st.InUse != 0 || st.Frees != 1 {
		t.Fatalf("stats after free: %+v", st)
	}
	z, err := f.dev.Alloc(0)
	if err != nil || z.Size() != 0 || z.Free() != nil || !errors.Is(z.Free(), ErrFreed) {
		t.Fatalf("zero-size allocation: %v", err)
	}
}

func TestCopyChecksFake(t *testing.T) {
	f := FakeFunction(t, "k", 0)
	m := FakeMemory(f, 16)
	if err := CopyHtoD(m, make([]float32, 5)); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "do not fit") {
		t.Fatalf("oversized copy: %v", err)
	}
	if err := CopyHtoD(m, []*int{nil}); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "Go pointers") {
		t.Fatalf("copy of pointers: %v", err)
	}
	other := FakeMemory(FakeFunction(t, "k2", 0), 16)
	if err := CopyDtoD(m, other, 16); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("copy between devices: %v", err)
	}
	odd, _ := m.View(1, 8)
	if err := odd.MemsetD32(0); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("misaligned MemsetD32: %v", err)
	}
	if err := CopyHtoD(m, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err) // the fake driver accepts the copy
	}
}
