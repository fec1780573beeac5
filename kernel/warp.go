package kernel

import "unsafe"

// The warp operations exchange values among the lanes of a warp named in
// mask, as CUDA's *_sync intrinsics do. Every lane named in mask must reach
// the same call; the simulator reports a shuffle reached by only part of the
// mask as an error.

// ShflSync returns v from lane src of the warp (CUDA __shfl_sync).
func ShflSync[T Word](t *Thread, mask uint32, v T, src int32) T {
	return fromBits[T](t.exec("ShflSync").Warp(t, ShflIdx, mask, toBits(v), src))
}

// ShflUp returns v from lane LaneID()-delta, or the caller's own v when
// that lane is below 0 (CUDA __shfl_up_sync).
func ShflUp[T Word](t *Thread, mask uint32, v T, delta int32) T {
	return fromBits[T](t.exec("ShflUp").Warp(t, ShflUpOp, mask, toBits(v), delta))
}

// ShflDown returns v from lane LaneID()+delta, or the caller's own v when
// that lane is past 31 (CUDA __shfl_down_sync).
func ShflDown[T Word](t *Thread, mask uint32, v T, delta int32) T {
	return fromBits[T](t.exec("ShflDown").Warp(t, ShflDownOp, mask, toBits(v), delta))
}

// ShflXor returns v from lane LaneID()^laneMask (CUDA __shfl_xor_sync).
func ShflXor[T Word](t *Thread, mask uint32, v T, laneMask int32) T {
	return fromBits[T](t.exec("ShflXor").Warp(t, ShflXorOp, mask, toBits(v), laneMask))
}

// Ballot returns a mask with bit k set when lane k of mask passed pred true
// (CUDA __ballot_sync).
func (t *Thread) Ballot(mask uint32, pred bool) uint32 {
	return uint32(t.exec("Ballot").Warp(t, VoteBallot, mask, b2u(pred), 0))
}

// Any reports whether any lane of mask passed pred true (CUDA __any_sync).
func (t *Thread) Any(mask uint32, pred bool) bool {
	return t.exec("Any").Warp(t, VoteAny, mask, b2u(pred), 0) != 0
}

// All reports whether every lane of mask passed pred true (CUDA __all_sync).
func (t *Thread) All(mask uint32, pred bool) bool {
	return t.exec("All").Warp(t, VoteAll, mask, b2u(pred), 0) != 0
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func toBits[T Word](v T) uint64 {
	if unsafe.Sizeof(v) == 4 {
		return uint64(*(*uint32)(unsafe.Pointer(&v)))
	}
	return *(*uint64)(unsafe.Pointer(&v))
}

func fromBits[T Word](b uint64) T {
	var v T
	if unsafe.Sizeof(v) == 4 {
		u := uint32(b)
		return *(*T)(unsafe.Pointer(&u))
	}
	return *(*T)(unsafe.Pointer(&b))
}
