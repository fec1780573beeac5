package cufft

import (
	"container/list"
	"errors"
	"sync"
)

// Alloc gives device memory of at least bytes, ordered on stream, and a
// function that frees it in stream order: gocu's caching allocator behind
// a Cache.
type Alloc func(stream uintptr, bytes int) (ptr uint64, free func(), err error)

// Cache keeps plans by layout, type and stream, as CuPy's plan cache, up to
// a number of plans (the least recently used is destroyed first). The
// plans of one stream never run at the same time, so they share one work
// area per stream, grown when a plan needs more, from Alloc.
//
// Get, Remove and Close make and destroy plans: call them where the CUDA
// context of the plans' device is current. A Cache is safe for concurrent
// use.
type Cache struct {
	mu    sync.Mutex
	max   int
	alloc Alloc
	lru   *list.List // of *cacheEntry, most recent first
	byKey map[planKey]*list.Element
	areas map[uintptr]*area
	newP  func(Layout, Type) (*Plan, error) // NewPlan; tests replace it
}

type cacheEntry struct {
	key    planKey
	stream uintptr
	plan   *Plan
}

// area is the work area of one stream's plans.
type area struct {
	ptr   uint64
	bytes int
	free  func()
}

// NewCache makes a cache of at most size plans (at least 1) whose work
// areas come from alloc.
func NewCache(size int, alloc Alloc) *Cache {
	return &Cache{max: max(size, 1), alloc: alloc, lru: list.New(), byKey: map[planKey]*list.Element{},
		areas: map[uintptr]*area{}, newP: NewPlan}
}

// planKey identifies a plan: a comparable copy of a checked layout (rank
// at most 3), its type and stream, built without allocating.
type planKey struct {
	rank, batch          int
	n, inEmbed, outEmbed [3]int
	embed                bool
	iStride, iDist       int
	oStride, oDist       int
	typ                  Type
	stream               uintptr
}

func cacheKey(l Layout, t Type, stream uintptr) planKey {
	k := planKey{rank: len(l.N), batch: l.Batch, embed: l.InEmbed != nil, typ: t, stream: stream,
		iStride: l.IStride, iDist: l.IDist, oStride: l.OStride, oDist: l.ODist}
	copy(k.n[:], l.N)
	copy(k.inEmbed[:], l.InEmbed)
	copy(k.outEmbed[:], l.OutEmbed)
	return k
}

// Get returns the plan for the layout, type and stream, made (with its
// stream and work area set) on first use.
func (c *Cache) Get(l Layout, t Type, stream uintptr) (*Plan, error) {
	if err := validate(l, t); err != nil {
		return nil, err
	}
	key := cacheKey(l, t, stream)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru == nil {
		return nil, errors.New("cufft: Get on a closed Cache")
	}
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cacheEntry).plan, nil
	}
	p, err := c.newP(l, t)
	if err != nil {
		return nil, err
	}
	if err := p.SetStream(stream); err != nil {
		_ = p.Destroy()
		return nil, err
	}
	if err := c.attach(p, stream); err != nil {
		_ = p.Destroy()
		return nil, err
	}
	c.byKey[key] = c.lru.PushFront(&cacheEntry{key: key, stream: stream, plan: p})
	for c.lru.Len() > c.max {
		c.evict(c.lru.Back())
	}
	return p, nil
}

// attach gives p the stream's work area, growing it (and moving the
// stream's other plans to the new one) when p needs more.
func (c *Cache) attach(p *Plan, stream uintptr) error {
	a := c.areas[stream]
	if p.WorkSize() == 0 {
		return nil
	}
	if a == nil || a.bytes < p.WorkSize() {
		if c.alloc == nil {
			return invalid("Cache.Get", "the plan needs a work area of %d bytes and the cache has no allocator", p.WorkSize())
		}
		ptr, free, err := c.alloc(stream, p.WorkSize())
		if err != nil {
			return err
		}
		na := &area{ptr: ptr, bytes: p.WorkSize(), free: free}
		for e := c.lru.Front(); e != nil; e = e.Next() {
			ce := e.Value.(*cacheEntry)
			if ce.stream == stream && ce.plan.WorkSize() > 0 {
				if err := ce.plan.SetWorkArea(ptr); err != nil {
					free()
					return err
				}
			}
		}
		if a != nil && a.free != nil {
			a.free()
		}
		c.areas[stream], a = na, na
	}
	return p.SetWorkArea(a.ptr)
}

func (c *Cache) evict(e *list.Element) {
	ce := c.lru.Remove(e).(*cacheEntry)
	delete(c.byKey, ce.key)
	_ = ce.plan.Destroy()
}

// Len returns the number of plans held.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru == nil {
		return 0
	}
	return c.lru.Len()
}

// Close destroys every plan and frees the work areas.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru == nil {
		return nil
	}
	var errs []error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		errs = append(errs, e.Value.(*cacheEntry).plan.Destroy())
	}
	for _, a := range c.areas {
		if a.free != nil {
			a.free()
		}
	}
	c.lru, c.byKey, c.areas = nil, nil, nil
	return errors.Join(errs...)
}
