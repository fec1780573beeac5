package sim

import (
	"fmt"
	"math/bits"

	"github.com/gocu-dev/gocu/kernel"
)

// undefined is what a lane reads from a lane that does not take part in a
// shuffle, a value CUDA leaves undefined: all ones, a NaN for floats.
const undefined = ^uint64(0)

// warpArrive completes th's warp operation if every lane of its mask that
// exists has reached a warp operation: the operation is performed with true
// 32-lane semantics and the lanes become runnable again.
//
// CUDA requires every non-exited lane named in the mask to execute the same
// operation with the same mask. A lane that returned from the kernel is
// reported (by stuck, once nothing else can run) as a partial warp rather
// than ignored, since that is the classic bug of an early return before a
// warp reduction. Lanes past the end of a partial last warp do not exist:
// a full mask there is fine, and reading from such a lane gives an
// undefined value, as on the GPU.
func (b *block) warpArrive(th *thread) {
	base := th.rank &^ 31
	group := th.mask & b.lanes(base)
	for m := group; m != 0; m &= m - 1 {
		if b.state[base+int32(bits.TrailingZeros32(m))] != stWarp {
			return
		}
	}
	lead := b.threads[base+int32(bits.TrailingZeros32(group))]
	for m := group; m != 0; m &= m - 1 {
		o := b.threads[base+int32(bits.TrailingZeros32(m))]
		if o.wop != lead.wop || o.mask != lead.mask || (o.wop == kernel.WarpCollective && o.cop != lead.cop) {
			b.err = &Error{Kind: KindWarp, Block: b.coord, Thread: lead.ThreadIdx, Pos: posOf(lead.pcs[:]), Op: lead.opName(),
				Other: &Party{Block: b.coord, Thread: o.ThreadIdx, Pos: posOf(o.pcs[:]), Op: o.opName()},
				Msg: fmt.Sprintf("lanes of one warp disagree: lane %d calls %s with mask %#08x, lane %d calls %s with mask %#08x",
					lead.rank-base, lead.opName(), lead.mask, o.rank-base, o.opName(), o.mask)}
			return
		}
	}
	if lead.wop == kernel.WarpCollective {
		b.collective(lead, base)
		return
	}

	var vals [32]uint64
	for m := group; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		vals[l] = b.threads[base+int32(l)].bits
	}
	var vote uint32
	for m := group; m != 0; m &= m - 1 {
		l := bits.TrailingZeros32(m)
		if vals[l]&1 != 0 {
			vote |= 1 << l
		}
	}
	for m := group; m != 0; m &= m - 1 {
		l := uint32(bits.TrailingZeros32(m))
		o := b.threads[base+int32(l)]
		switch o.wop {
		case kernel.WarpSync:
			o.result = 0
		case kernel.VoteBallot:
			o.result = uint64(vote)
		case kernel.VoteAny:
			o.result = b2u(vote != 0)
		case kernel.VoteAll:
			o.result = b2u(vote == group)
		default:
			src, own := srcLane(o.wop, l, o.arg)
			switch {
			case own:
				o.result = vals[l]
			case group&(1<<src) != 0:
				o.result = vals[src]
			default:
				o.result = undefined
			}
		}
		b.state[o.rank] = stReady
		b.queue = append(b.queue, o.rank)
	}
	b.nWarp -= int32(bits.OnesCount32(group))
	if lead.wop == kernel.WarpSync {
		b.wep[base>>5]++
		if b.hb.on {
			b.hb.join(base, group)
		}
	}
}

// srcLane returns the lane a shuffle reads for lane l, or own when CUDA
// gives the lane its own value (a source outside the warp for ShflUp,
// ShflDown and ShflXor). ShflSync takes the source lane modulo 32.
func srcLane(op kernel.WarpOp, l uint32, arg int32) (src uint32, own bool) {
	switch op {
	case kernel.ShflIdx:
		return uint32(arg) & 31, false
	case kernel.ShflUpOp:
		d := uint32(arg)
		if d > l {
			return 0, true
		}
		return l - d, false
	case kernel.ShflDownOp:
		s := uint64(l) + uint64(uint32(arg))
		if s > 31 {
			return 0, true
		}
		return uint32(s), false
	case kernel.ShflXorOp:
		s := l ^ uint32(arg)
		if s > 31 {
			return 0, true
		}
		return s, false
	}
	return 0, true
}
