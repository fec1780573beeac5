package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

const undefined = -1 // what a lane reads from a lane that does not take part (all ones)

// model computes a shuffle by CUDA's rules for the warp starting at rank
// base of a block of n threads where every existing lane takes part: the
// source lane of lane l, or l itself when the source is outside the warp.
func model(op string, l, arg int32) (src int32) {
	switch op {
	case "idx":
		return arg & 31
	case "up":
		if uint32(arg) > uint32(l) {
			return l
		}
		return l - arg
	case "down":
		if int64(l)+int64(uint32(arg)) > 31 {
			return l
		}
		return l + arg
	default: // xor
		if s := uint32(l) ^ uint32(arg); s <= 31 {
			return int32(s)
		}
		return l
	}
}

func TestShuffles(t *testing.T) {
	for _, n := range []int32{64, 48, 7} { // full warps, a partial last warp, a tiny block
		for _, op := range []string{"idx", "up", "down", "xor"} {
			out := make([]int32, n)
			arg := func(l int32) int32 { // varies per lane and leaves the warp at times
				switch op {
				case "idx":
					return (l*7 + 3) % 40
				case "up", "down":
					return (l % 5) * 4
				}
				return int32(1) << (l % 6) // 32 for lane 5: outside the warp
			}
			err := launch(d1(2), d1(n), func(t *kernel.Thread) {
				v := t.Rank()*10 + 1
				l := t.LaneID()
				var r int32
				switch op {
				case "idx":
					r = kernel.ShflSync(t, kernel.FullMask, v, arg(l))
				case "up":
					r = kernel.ShflUp(t, kernel.FullMask, v, arg(l))
				case "down":
					r = kernel.ShflDown(t, kernel.FullMask, v, arg(l))
				default:
					r = kernel.ShflXor(t, kernel.FullMask, v, arg(l))
				}
				if t.BlockIdx.X == 1 {
					out[t.Rank()] = r
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			for r := range n {
				base, l := r&^31, r&31
				src := base + model(op, l, arg(l))
				want := src*10 + 1
				if src >= n {
					want = undefined
				}
				if out[r] != want {
					t.Fatalf("n=%d %s: thread %d got %d, want %d", n, op, r, out[r], want)
				}
			}
		}
	}
}

func TestShuffleTypes(t *testing.T) {
	f64 := make([]float64, 32)
	i64 := make([]int64, 32)
	f32 := make([]float32, 32)
	err := launch(d1(1), d1(32), func(t *kernel.Thread) {
		l := t.LaneID()
		f64[l] = kernel.ShflXor(t, kernel.FullMask, math.Pi*float64(l), 1)
		i64[l] = kernel.ShflDown(t, kernel.FullMask, int64(l)<<40, 1)
		f32[l] = kernel.ShflSync(t, kernel.FullMask, -float32(l)/3, 31)
	})
	if err != nil {
		t.Fatal(err)
	}
	for l := range int32(32) {
		if f64[l] != math.Pi*float64(l^1) || f32[l] != -float32(31)/3 {
			t.Fatalf("lane %d: %v %v", l, f64[l], f32[l])
		}
		want := int64(l+1) << 40
		if l == 31 {
			want = 31 << 40
		}
		if i64[l] != want {
			t.Fatalf("lane %d: %v, want %v", l, i64[l], want)
		}
	}
}

func TestShuffleMasks(t *testing.T) {
	even, low := make([]int32, 32), make([]int32, 32)
	err := launch(d1(1), d1(32), func(t *kernel.Thread) {
		l := t.LaneID()
		even[l], low[l] = -2, -2
		if l%2 == 0 { // only the even lanes, with a mask of them
			even[l] = kernel.ShflDown(t, 0x55555555, l*100, 2)
		}
		t.SyncWarp(kernel.FullMask)
		if l < 16 { // the low half: lanes 8-15 read lanes 16-23, which do not take part
			low[l] = kernel.ShflDown(t, 0x0000ffff, l, 8)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for l := range int32(32) {
		wantEven, wantLow := int32(-2), int32(-2)
		switch {
		case l == 30:
			wantEven = 3000 // lane 32 is outside the warp: its own value
		case l%2 == 0:
			wantEven = (l + 2) * 100
		}
		switch {
		case l < 8:
			wantLow = l + 8
		case l < 16:
			wantLow = undefined
		}
		if even[l] != wantEven || low[l] != wantLow {
			t.Fatalf("lane %d: %d and %d, want %d and %d", l, even[l], low[l], wantEven, wantLow)
		}
	}
}

func TestVotes(t *testing.T) {
	ballot := make([]uint32, 96)
	anyAll := make([]int32, 96)
	err := launch(d1(1), d1(80), func(t *kernel.Thread) { // the third warp has 16 lanes
		r, l := t.Rank(), t.LaneID()
		ballot[r] = t.Ballot(kernel.FullMask, l%3 == 0 || r == 40)
		a := t.Any(kernel.FullMask, r == 70)
		b := t.All(kernel.FullMask, r < 64)
		anyAll[r] = int32(bool2int(a)) + 2*int32(bool2int(b))
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 80 {
		w := r / 32
		var want uint32
		for l := range 32 {
			if rr := w*32 + l; rr < 80 && (l%3 == 0 || rr == 40) {
				want |= 1 << l
			}
		}
		if ballot[r] != want {
			t.Fatalf("thread %d: ballot %#x, want %#x", r, ballot[r], want)
		}
		wantAA := int32(0)
		if w == 2 {
			wantAA = 1 // lane 70 is true; not every lane is < 64
		} else {
			wantAA = 2
		}
		if anyAll[r] != wantAA {
			t.Fatalf("thread %d: any/all %d, want %d", r, anyAll[r], wantAA)
		}
	}
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestWarpErrors(t *testing.T) {
	// The calling lane must be in the mask.
	e := wantErr(t, launch(d1(1), d1(32), func(t *kernel.Thread) {
		kernel.ShflDown(t, 0xfffffffe, int32(1), 1) // line: notinmask
	}), sim.KindWarp)
	wantPos(t, e.Pos, line(t, "notinmask"))
	if !strings.Contains(e.Msg, "lane 0 calls ShflDown with mask 0xfffffffe, which does not name it") || e.Thread != d1(0) {
		t.Errorf("got %v", e)
	}

	// An early return before a warp reduction: a partial warp.
	for _, seed := range []uint64{1, 2, 3} {
		out := make([]float32, 64)
		err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(64), Seed: seed}, sim.Kernel{Name: "reduce", Func: func(t *kernel.Thread) {
			if t.Rank() >= 40 {
				return
			}
			v := float32(t.Rank())
			v += kernel.ShflDown(t, kernel.FullMask, v, 16) // line: reduce
			out[t.Rank()] = v
		}})
		e := wantErr(t, err, sim.KindWarp)
		wantPos(t, e.Pos, line(t, "reduce"))
		if e.Thread != d1(32) || e.Other == nil || e.Other.Thread != d1(40) || e.Other.Op != "returned" || e.Op != "ShflDown" {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(e.Msg, "reached by only part of the warp: lane 8 of the mask returned from the kernel") {
			t.Errorf("message %q", e.Msg)
		}
	}

	// Lanes of one mask at different operations.
	e = wantErr(t, launch(d1(1), d1(32), func(t *kernel.Thread) {
		if t.LaneID() < 5 {
			t.Ballot(kernel.FullMask, true) // line: ballot
		} else {
			t.Any(kernel.FullMask, true) // line: any
		}
	}), sim.KindWarp)
	wantPos(t, e.Pos, line(t, "ballot"))
	wantPos(t, e.Other.Pos, line(t, "any"))
	if e.Thread != d1(0) || e.Other.Thread != d1(5) || !strings.Contains(e.Msg, "lanes of one warp disagree") {
		t.Errorf("got %v", e)
	}

	// A warp operation waiting for a lane that waits at a barrier.
	e = wantErr(t, launch(d1(1), d1(64), func(t *kernel.Thread) {
		if t.LaneID() != 3 {
			t.SyncWarp(kernel.FullMask) // line: syncwarp
		}
		t.SyncThreads() // line: barrier
	}), sim.KindWarp)
	wantPos(t, e.Pos, line(t, "syncwarp"))
	wantPos(t, e.Other.Pos, line(t, "barrier"))
	if e.Thread != d1(0) || e.Other.Thread != d1(3) || e.Other.Op != "SyncThreads" {
		t.Errorf("got %v", e)
	}
}
