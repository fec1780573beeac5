package gpu

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// moduleLimit bounds the modules loaded per device: one per distinct
// kernel structure in use, so a long-running program that builds ever new
// expressions keeps at most this many.
const moduleLimit = 256

// module is a loaded translation unit of generated code.
type module struct {
	key  [sha256.Size]byte
	mod  *cuda.Module
	fns  map[string]*kfunc // guarded by modules.mu
	dead atomic.Bool       // evicted: plans holding it must plan again
	elem *list.Element
}

// kfunc is a kernel of a module with its occupancy.
type kfunc struct {
	fn    *cuda.Function
	mod   *module
	perSM int // resident blocks per SM at the kernel's block size
}

type pendingUnload struct {
	ev  *cuda.Event
	mod *cuda.Module
}

// modules is the bounded LRU cache of loaded modules, keyed by a hash of
// their source.
type modules struct {
	b       *Backend
	mu      sync.Mutex
	limit   int
	byKey   map[[sha256.Size]byte]*module
	lru     *list.List
	pending []pendingUnload
	loads   atomic.Int64
}

func (m *modules) init(b *Backend, limit int) {
	m.b, m.limit = b, limit
	m.byKey = map[[sha256.Size]byte]*module{}
	m.lru = list.New()
}

// Loaded returns the number of modules loaded now and the number of loads
// since the backend was opened.
func (b *Backend) Loaded() (now int, total int64) {
	b.mods.mu.Lock()
	defer b.mods.mu.Unlock()
	return b.mods.lru.Len(), b.mods.loads.Load()
}

var compileOnce = sync.OnceValues(func() (*nvrtc.Cache, error) {
	v, err := cuda.DriverVersion()
	if err != nil {
		return nil, err
	}
	return nvrtc.NewCache(nvrtc.CacheConfig{Driver: fmt.Sprint(v)})
})

// function returns kernel k loaded on the device, compiling its source on
// first use (through NVRTC's disk cache).
func (b *Backend) function(k *cudagen.Kernel) (*kfunc, error) {
	key := sha256.Sum256([]byte(k.Source))
	m := &b.mods
	m.mu.Lock()
	if mod := m.byKey[key]; mod != nil {
		m.lru.MoveToFront(mod.elem)
		f, err := mod.function(k)
		m.mu.Unlock()
		return f, err
	}
	m.mu.Unlock()

	c, err := compileOnce()
	if err != nil {
		return nil, err
	}
	// --fmad=false: multiplies and adds round separately, as Go (and so
	// the CPU backend) computes them on amd64. --minimal (NVRTC 12.4 and
	// later) leaves out the runtime API declarations the generated code
	// does not use, which makes a cold compile much faster; an NVRTC that
	// does not know it, or a source that needs more, compiles without it.
	opts := nvrtc.Options{Name: k.Name + ".cu", Arch: b.arch, NoFMAD: true, Extra: []string{"--minimal"}}
	res, err := c.Compile(k.Source, opts)
	if err != nil {
		opts.Extra = nil
		res, err = c.Compile(k.Source, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("gpu: compiling %s: %w", k.Name, err)
	}
	cm, err := b.dev.LoadModule(res.Code)
	if err != nil {
		return nil, b.note(fmt.Errorf("gpu: loading %s: %w", k.Name, err))
	}
	m.loads.Add(1)

	m.mu.Lock()
	defer m.mu.Unlock()
	if mod := m.byKey[key]; mod != nil { // another goroutine loaded it first
		_ = cm.Unload() // never launched
		m.lru.MoveToFront(mod.elem)
		return mod.function(k)
	}
	mod := &module{key: key, mod: cm, fns: map[string]*kfunc{}}
	mod.elem = m.lru.PushFront(mod)
	m.byKey[key] = mod
	for m.lru.Len() > m.limit {
		m.evict(m.lru.Back().Value.(*module))
	}
	m.reapLocked()
	return mod.function(k)
}

// function looks up (once) a kernel of the module; m.mu is held.
func (mod *module) function(k *cudagen.Kernel) (*kfunc, error) {
	if f := mod.fns[k.Name]; f != nil {
		return f, nil
	}
	fn, err := mod.mod.Function(k.Name)
	if err != nil {
		return nil, fmt.Errorf("gpu: kernel %s: %w", k.Name, err)
	}
	per, err := fn.MaxActiveBlocksPerSM(k.Block, 0)
	if err != nil || per < 1 {
		per = 1
	}
	f := &kfunc{fn: fn, mod: mod, perSM: per}
	mod.fns[k.Name] = f
	return f, nil
}

// evict drops a module from the cache; m.mu is held. Plans that hold it
// see it dead at their next launch and plan again. It is unloaded once
// the work queued so far (which may still run its kernels) has finished:
// marking it dead and recording the event happen under the launch lock,
// so no launch of it can follow the event.
func (m *modules) evict(mod *module) {
	m.lru.Remove(mod.elem)
	delete(m.byKey, mod.key)
	b := m.b
	b.mu.Lock()
	mod.dead.Store(true)
	ev, err := b.dev.NewEvent(cuda.EventDisableTiming)
	if err == nil {
		if err = ev.Record(b.stream); err != nil {
			_ = ev.Close()
		}
	}
	b.mu.Unlock()
	if err != nil {
		// Without an event, keep the module loaded: correctness first.
		return
	}
	m.pending = append(m.pending, pendingUnload{ev, mod.mod})
}

// reap unloads evicted modules whose work has finished.
func (m *modules) reap() {
	m.mu.Lock()
	m.reapLocked()
	m.mu.Unlock()
}

func (m *modules) reapLocked() {
	if m.b.graphsLive() {
		return // captured graphs may launch evicted modules' kernels
	}
	keep := m.pending[:0]
	for _, p := range m.pending {
		if done, err := p.ev.Query(); err == nil && !done {
			keep = append(keep, p)
			continue
		}
		_ = p.ev.Close()
		_ = p.mod.Unload()
	}
	clear(m.pending[len(keep):])
	m.pending = keep
}

// SetModuleLimit changes the most modules kept loaded (evicting down to
// it) and returns the previous limit; for tests and memory-tight programs.
func (b *Backend) SetModuleLimit(n int) int {
	m := &b.mods
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.limit
	m.limit = max(n, 1)
	for m.lru.Len() > m.limit {
		m.evict(m.lru.Back().Value.(*module))
	}
	return old
}
