package cuda

import (
	"errors"
	"testing"
)

// AllocOnNoCleanup memory behaves as AllocOn's (Free, views, use after
// free, double free, stats), only without the collector's backstop.
func TestAllocOnNoCleanup(t *testing.T) {
	d := FakeFunction(t, "k", 0).dev
	m, err := d.AllocOnNoCleanup(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if m.Size() != 100 || m.Ptr() == 0 || m.Stream() != d.stream || m.Freed() {
		t.Fatalf("memory %v: size %d, stream %p, freed %v", m, m.Size(), m.Stream(), m.Freed())
	}
	if st := d.alloc.Stats(); st.InUse == 0 || st.Allocs != 1 {
		t.Fatalf("stats after the allocation: %+v", st)
	}
	v, err := m.View(8, 16)
	if err != nil || v.Ptr() != m.Ptr()+8 {
		t.Fatalf("view: %v, %v", v, err)
	}
	if err := v.Free(); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("free of a view: %v", err)
	}
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
	if !v.Freed() || v.check() == nil {
		t.Fatal("a view of freed memory is not freed")
	}
	if err := m.Free(); !errors.Is(err, ErrFreed) {
		t.Fatalf("double free: %v", err)
	}
	if st := d.alloc.Stats(); st.InUse != 0 || st.Frees != 1 {
		t.Fatalf("stats after the free: %+v", st)
	}
	z, err := d.AllocOnNoCleanup(nil, 0)
	if err != nil || z.Size() != 0 || z.Free() != nil {
		t.Fatalf("zero bytes: %v, %v", z, err)
	}
	if _, err := d.AllocOnNoCleanup(nil, -1); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("negative size: %v", err)
	}
}

// AllocInto holds the Memory in the caller's block: the Memory is the
// block's, a block holding memory is refused, a block whose memory was
// freed takes a new allocation, and a failed allocation leaves the block
// usable.
func TestAllocInto(t *testing.T) {
	d := FakeFunction(t, "k", 0).dev
	type owner struct {
		blk MemoryBlock
	}
	o := new(owner)
	m, err := d.AllocInto(&o.blk, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	if m != &o.blk.m || m.Size() != 64 || m.Ptr() == 0 || m.Freed() {
		t.Fatalf("memory %v: not the block's, or size %d, freed %v", m, m.Size(), m.Freed())
	}
	if _, err := d.AllocInto(&o.blk, nil, 64); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("a second allocation into the block: %v", err)
	}
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
	if err := m.Free(); !errors.Is(err, ErrFreed) {
		t.Fatalf("double free: %v", err)
	}
	// Freed, the block may hold a new allocation: the same Memory, live.
	m2, err := d.AllocInto(&o.blk, nil, 128)
	if err != nil {
		t.Fatalf("an allocation into a freed block: %v", err)
	}
	if m2 != m || m2.Size() != 128 || m2.Ptr() == 0 || m2.Freed() {
		t.Fatalf("reused block: memory %v, size %d, freed %v", m2, m2.Size(), m2.Freed())
	}
	if err := m2.Free(); err != nil {
		t.Fatal(err)
	}
	if st := d.alloc.Stats(); st.InUse != 0 || st.Frees != 2 {
		t.Fatalf("stats after the frees: %+v", st)
	}
	var blk MemoryBlock
	if _, err := d.AllocInto(&blk, nil, -1); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("negative size: %v", err)
	}
	d.alloc.SetLimit(1 << 20)
	_, err = d.AllocInto(&blk, nil, 4<<20)
	d.alloc.SetLimit(0)
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("over the limit: %v", err)
	}
	if m, err := d.AllocInto(&blk, nil, 64); err != nil || m.Free() != nil {
		t.Fatalf("after a failed allocation: %v", err)
	}
}

// BenchmarkAllocFree: a small allocation and its free through the caching
// allocator (fake driver), with and without the collector's backstop.
func BenchmarkAllocFree(b *testing.B) {
	d := FakeFunction(b, "k", 0).dev
	for _, c := range []struct {
		name  string
		alloc func(*Stream, int) (*Memory, error)
	}{{"cleanup", d.AllocOn}, {"nocleanup", d.AllocOnNoCleanup}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, err := c.alloc(nil, 64)
				if err != nil {
					b.Fatal(err)
				}
				_ = m.Free()
			}
		})
	}
}
