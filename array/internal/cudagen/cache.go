package cudagen

import (
	"container/list"
	"strconv"
	"sync"
)

// Cache keeps the most recently used generated kernels (or anything the
// backend attaches to them, such as loaded modules) by specialisation key,
// so that generation and compilation happen once per distinct program
// structure and a long-running program that builds ever new expressions
// cannot grow it without bound.
type Cache[V any] struct {
	mu    sync.Mutex
	limit int
	ll    *list.List
	m     map[string]*list.Element
	evict func(key string, v V)
}

type entry[V any] struct {
	key string
	v   V
}

// NewCache returns a cache of at most limit entries; evict (may be nil) is
// called for entries pushed out.
func NewCache[V any](limit int, evict func(key string, v V)) *Cache[V] {
	return &Cache[V]{limit: max(limit, 1), ll: list.New(), m: map[string]*list.Element{}, evict: evict}
}

// Get returns the value for key, making it by make on a miss. make runs
// outside the lock; concurrent misses on one key may both make it, and the
// first stored wins.
func (c *Cache[V]) Get(key string, make func() (V, error)) (V, error) {
	c.mu.Lock()
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		v := e.Value.(*entry[V]).v
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	v, err := make()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*entry[V]).v, nil
	}
	c.m[key] = c.ll.PushFront(&entry[V]{key, v})
	for c.ll.Len() > c.limit {
		old := c.ll.Back()
		c.ll.Remove(old)
		en := old.Value.(*entry[V])
		delete(c.m, en.key)
		if c.evict != nil {
			c.evict(en.key, en.v)
		}
	}
	return v, nil
}

// Len is the number of cached entries.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// ElemKey, ReduceKey and AxisKey are the cache keys of generated kernels:
// the program's structure and the specialisation, never sizes or values.
func ElemKey(pKey string, s ElemSpec) string { return "ew|" + pKey + "|" + s.key() }

// ReduceKey is the cache key of a reduction's kernels.
func ReduceKey(op string, pKey string, out string, s ReduceSpec) string {
	return "red|" + op + "|" + out + "|" + pKey + "|" + s.key()
}

// AxisKey is the cache key of a softmax-family kernel.
func AxisKey(kind string, pKey string, s AxisSpec) string {
	return "axis|" + kind + "|" + pKey + "|" + fmtClasses(s.In) + "|" + strconv.Itoa(s.Outer) + boolKey(s.Index64) + "|" + s.Out.String()
}

func fmtClasses(c []Class) string {
	b := make([]byte, len(c))
	for i, x := range c {
		b[i] = '0' + byte(x)
	}
	return string(b)
}

func boolKey(b bool) string {
	if b {
		return "L"
	}
	return "I"
}
