package gpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cuda"
)

// planLimit bounds the plan cache; past it the cache starts afresh
// (plans are cheap to rebuild: the kernels stay loaded).
const planLimit = 4096

// ticketWords is the number of zeroed int32 words plans may use as tickets.
const ticketWords = 1024

// plan is a request's launches with every argument either fixed or bound
// per call.
type plan struct {
	launches []planLaunch
	scratch  []int // byte offset of each scratch buffer: arena, or ticket words for Zero ones
	zero     []bool
	arena    int // arena bytes the plan needs

	prep atomic.Pointer[prepared] // EvalPrepare's handle, made once
}

type planLaunch struct {
	k    *kfunc
	cfg  cuda.Config
	args []planArg
}

// argKind says where a launch argument comes from.
type argKind uint8

const (
	argFixed   argKind = iota // bits
	argOperand                // pointer to request buffer idx, plus off bytes
	argScratch                // pointer to scratch idx
	argScalar                 // program scalar idx (double bits or int64)
	argSeed                   // Random.Seed
	argCounter                // Random.Counter
	argP0                     // Random.P0
	argP1                     // Random.P1
)

type planArg struct {
	kind argKind
	idx  int32
	off  int64
	bits uint64
}

// call is what a launch binds per call: the request's buffers (in the
// order of the plan's operands), its scalars and, for fills, the random
// parameters.
type call struct {
	bufs    []*Buffer
	scalars []backend.Scalar
	rnd     *backend.Random
}

// planCache maps request keys to plans.
type planCache struct {
	mu    sync.RWMutex
	limit int
	m     map[string]*plan
}

func (c *planCache) init(limit int) {
	c.limit = limit
	c.m = make(map[string]*plan)
}

func (c *planCache) get(key []byte) *plan {
	c.mu.RLock()
	p := c.m[string(key)] // no allocation: the conversion is only for the lookup
	c.mu.RUnlock()
	return p
}

func (c *planCache) put(key []byte, p *plan) {
	c.mu.Lock()
	if len(c.m) >= c.limit {
		clear(c.m)
	}
	c.m[string(key)] = p
	c.mu.Unlock()
}

func (c *planCache) drop(key []byte) {
	c.mu.Lock()
	delete(c.m, string(key))
	c.mu.Unlock()
}

// PlanCount returns the number of cached plans.
func (b *Backend) PlanCount() int {
	b.plans.mu.RLock()
	defer b.plans.mu.RUnlock()
	return len(b.plans.m)
}

// Request keys are built by appending to a byte array on the caller's
// stack (no allocation for keys of ordinary size); the plan cache looks
// them up without converting them to strings.

func appendInt(k []byte, v int) []byte { return binary.AppendVarint(k, int64(v)) }

func appendLayout(k []byte, l *backend.Layout) []byte {
	k = appendInt(k, len(l.Shape))
	for _, d := range l.Shape {
		k = appendInt(k, d)
	}
	for _, s := range l.Strides {
		k = appendInt(k, s)
	}
	return appendInt(k, l.Offset)
}

// align is the alignment class of an operand's first element: the
// trailing zero bits of its address, up to 16 bytes (what vector loads
// need).
func align(g *Buffer, offset int) byte {
	a := g.ptr + uint64(offset*g.dt.Size())
	if a == 0 {
		return 4
	}
	return byte(min(bits.TrailingZeros64(a), 4))
}

// appendProgram writes a program's structure and its inputs' dtypes,
// layouts and alignments (bufs[i] holds input i).
func appendProgram(k []byte, p *backend.Program, bufs []*Buffer) []byte {
	k = appendInt(k, len(p.Shape))
	for _, d := range p.Shape {
		k = appendInt(k, d)
	}
	k = appendInt(k, len(p.Nodes))
	for _, n := range p.Nodes {
		k = append(k, byte(n.Op), byte(n.DType))
		ar := n.Op.Arity()
		if ar == 0 && n.Op != backend.OpIota {
			ar = 1
		}
		for a := 0; a < ar; a++ {
			k = appendInt(k, int(n.Args[a]))
		}
	}
	k = appendInt(k, len(p.Scalars))
	for _, s := range p.Scalars {
		k = append(k, byte(s.DType))
	}
	k = appendInt(k, len(p.Inputs))
	for i := range p.Inputs {
		l := &p.Inputs[i].Layout
		k = append(k, byte(bufs[i].dt)) // the input's dtype, without an interface call
		k = appendLayout(k, l)
		k = append(k, align(bufs[i], l.Offset))
	}
	return k
}

// appendAliases writes, for each buffer, the first index holding the same
// one, so that a plan maps its operands to buffers the same way on every
// call with the key.
func appendAliases(k []byte, bufs []*Buffer) []byte {
	for i, g := range bufs {
		j := 0
		for j < i && bufs[j] != g {
			j++
		}
		k = appendInt(k, j)
	}
	return k
}

// errStale reports a plan whose module was evicted.
var errStale = errors.New("gpu: plan uses an unloaded module")

// options are the planning options: device facts, alignment from device
// addresses, the kernel memo and the occupancy of loaded kernels.
func (b *Backend) options() cudagen.Options {
	return cudagen.Options{
		SMs: b.sms,
		Aligned: func(o backend.Operand, n int) bool {
			g, ok := o.Buf.(*Buffer)
			if !ok {
				return false
			}
			return (g.ptr+uint64(o.Layout.Offset*g.dt.Size()))%uint64(n) == 0
		},
		Cache: b.kernels,
		BlocksPerSM: func(k *cudagen.Kernel) int {
			f, err := b.load(k)
			if err != nil {
				return 0 // the error comes back when the plan loads it
			}
			return f.perSM
		},
	}
}

// compile turns a cudagen plan into a launchable one; bufs are the
// request's buffers, which the plan's operands are mapped to by identity.
func (b *Backend) compile(cp *cudagen.Plan, c *call) (*plan, error) {
	return compilePlan(cp, c, b.stream, b.load)
}

// compilePlan is compile with the kernel loader as a parameter (tests
// plan without a GPU). Scalars of the request's program are bound per
// call; scalars of programs the planner made are part of the plan.
func compilePlan(cp *cudagen.Plan, c *call, stream *cuda.Stream, load func(*cudagen.Kernel) (*kfunc, error)) (*plan, error) {
	bufs := c.bufs
	p := &plan{}
	words := 0
	for _, sc := range cp.Scratch {
		if sc.Zero {
			// Every plan draws its tickets from the same zeroed words:
			// the stream runs plans one after another, and each leaves
			// them zero.
			if sc.DType.Size() != 4 || words+sc.Len > ticketWords {
				return nil, fmt.Errorf("gpu: zeroed scratch of %d %v", sc.Len, sc.DType)
			}
			p.scratch = append(p.scratch, 4*words)
			p.zero = append(p.zero, true)
			words += sc.Len
			continue
		}
		p.arena = (p.arena + 255) &^ 255
		p.scratch = append(p.scratch, p.arena)
		p.zero = append(p.zero, false)
		p.arena += sc.Len * sc.DType.Size()
	}
	for _, l := range cp.Launches {
		kf, err := load(l.Kernel)
		if err != nil {
			return nil, err
		}
		if len(l.Args) != len(l.Kernel.Params) {
			return nil, fmt.Errorf("gpu: %s: %d arguments for %d parameters", l.Kernel.Name, len(l.Args), len(l.Kernel.Params))
		}
		pl := planLaunch{k: kf, cfg: cuda.Config{
			Grid:   cuda.Dim3{X: uint32(l.Grid[0]), Y: uint32(max(l.Grid[1], 1)), Z: uint32(max(l.Grid[2], 1))},
			Block:  cuda.Dim3{X: uint32(l.Block)},
			Stream: stream,
		}}
		if l.Grid[0] < 1 || l.Grid[0] > math.MaxInt32 {
			return nil, fmt.Errorf("gpu: %s: grid of %d blocks", l.Kernel.Name, l.Grid[0])
		}
		for i, a := range l.Args {
			prm := l.Kernel.Params[i]
			var pa planArg
			switch {
			case a.Type == cudagen.Ptr && a.Operand < 0:
				s := -1 - a.Operand
				pa = planArg{kind: argScratch, idx: int32(s), off: int64(a.Offset * cp.Scratch[s].DType.Size())}
			case a.Type == cudagen.Ptr:
				buf := l.Operands[a.Operand].Buf
				idx := -1
				for j, g := range bufs {
					if backend.Buffer(g) == buf {
						idx = j
						break
					}
				}
				if idx < 0 {
					return nil, fmt.Errorf("gpu: %s: operand %d is not a buffer of the request", l.Kernel.Name, a.Operand)
				}
				pa = planArg{kind: argOperand, idx: int32(idx), off: int64(a.Offset * buf.DType().Size())}
			case prm.Role == cudagen.RoleScalar && len(l.Scalars) > 0 && len(c.scalars) > 0 && &l.Scalars[0] == &c.scalars[0]:
				pa = planArg{kind: argScalar, idx: int32(prm.Index)}
			case prm.Role == cudagen.RoleSeed:
				pa = planArg{kind: argSeed}
			case prm.Role == cudagen.RoleCounter:
				pa = planArg{kind: argCounter}
			case prm.Role == cudagen.RoleP0:
				pa = planArg{kind: argP0}
			case prm.Role == cudagen.RoleP1:
				pa = planArg{kind: argP1}
			default:
				if a.Type == cudagen.I32 {
					return nil, fmt.Errorf("gpu: %s: 4-byte parameter %s", l.Kernel.Name, prm.Name)
				}
				pa = planArg{kind: argFixed, bits: a.Bits}
			}
			pl.args = append(pl.args, pa)
		}
		p.launches = append(p.launches, pl)
	}
	return p, nil
}

// scalarBits is how a program scalar travels (cudagen's scalarArg): the
// double's bits for floats, the int64 for the rest.
func scalarBits(s backend.Scalar) uint64 {
	if s.DType.IsFloating() {
		return math.Float64bits(s.F)
	}
	return uint64(s.I)
}

// run launches a plan on the stream.
func (b *Backend) run(p *plan, c *call) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range p.launches {
		if p.launches[i].k.mod.dead.Load() {
			return errStale
		}
	}
	var arena uint64
	if p.arena > 0 {
		if p.arena > b.scratchBytes {
			size := max(p.arena, 2*b.scratchBytes, 64<<10)
			m, err := b.dev.AllocOn(b.stream, size)
			if err != nil {
				return err
			}
			if b.scratch != nil {
				b.retireScratch(b.scratch) // graphs may hold its address
			}
			b.scratch, b.scratchBytes = m, size
		}
		arena = uint64(b.scratch.Ptr())
	}
	var argv [maxFastArgs]uint64
	zero := uint64(b.zero.Ptr())
	for li := range p.launches {
		l := &p.launches[li]
		var vals []uint64
		if len(l.args) <= maxFastArgs {
			vals = argv[:len(l.args)]
		} else {
			vals = make([]uint64, len(l.args))
		}
		p.bind(l, c, arena, zero, vals)
		if err := launch(l.k.fn, &l.cfg, vals); err != nil {
			return b.note(err)
		}
	}
	return nil
}

// bind computes the argument values of launch l for call c: arena and
// zero are the addresses of the scratch arena and the zeroed tickets.
func (p *plan) bind(l *planLaunch, c *call, arena, zero uint64, vals []uint64) {
	for i, a := range l.args {
		var v uint64
		switch a.kind {
		case argFixed:
			v = a.bits
		case argOperand:
			v = c.bufs[a.idx].ptr + uint64(a.off)
		case argScratch:
			if p.zero[a.idx] {
				v = zero + uint64(p.scratch[a.idx]) + uint64(a.off)
			} else {
				v = arena + uint64(p.scratch[a.idx]) + uint64(a.off)
			}
		case argScalar:
			v = scalarBits(c.scalars[a.idx])
		case argSeed:
			v = c.rnd.Seed
		case argCounter:
			v = c.rnd.Counter
		case argP0:
			v = math.Float64bits(c.rnd.P0)
		case argP1:
			v = math.Float64bits(c.rnd.P1)
		}
		vals[i] = v
	}
}

// execute runs the plan cached under key, or plans the request with mk,
// caches and runs it. A plan whose module was evicted is planned again.
// It returns the plan it ran successfully, or nil.
func (b *Backend) execute(key []byte, c *call, mk func() (*cudagen.Plan, error)) (*plan, error) {
	if p := b.plans.get(key); p != nil {
		err := b.run(p, c)
		if err != errStale {
			return p, err
		}
		b.plans.drop(key)
	}
	for try := 0; ; try++ {
		cp, err := mk()
		if err != nil {
			return nil, err
		}
		p, err := b.compile(cp, c)
		if err != nil {
			return nil, err
		}
		err = b.run(p, c)
		if err == errStale && try < 3 {
			continue // evicted between loading and launching: load again
		}
		if err != nil {
			return nil, err
		}
		b.plans.put(key, p)
		return p, nil
	}
}
