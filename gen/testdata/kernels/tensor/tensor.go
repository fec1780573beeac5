// Package tensor exercises the low-precision types, the warp matrix
// operations and the asynchronous copies: every conversion, every
// LdMatrix form, the three MMAs and CpAsync with its commit and wait.
package tensor

import (
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/lowp"
)

// Convert rounds x to every low-precision format and back, and packs and
// unpacks pairs: out holds 12 floats per element of x.
//
//gocu:kernel
func Convert(t *kernel.Thread, x []float32, h []kernel.Half, b []kernel.BFloat16, e4 []kernel.FP8E4M3, e5 []kernel.FP8E5M2, out []float32, bits []uint32) {
	i := t.Index()
	if i >= int32(len(x)) {
		return
	}
	v := x[i]
	h[i] = kernel.ToHalf(v)
	b[i] = kernel.ToBFloat16(v)
	e4[i] = kernel.ToFP8E4M3(v)
	e5[i] = lowp.Float8E5M2FromFloat32(v)
	o := out[i*12 : i*12+12]
	o[0] = h[i].Float32()
	o[1] = b[i].Float32()
	o[2] = e4[i].Float32()
	o[3] = e5[i].Float32()
	o[4] = float32(lowp.BFloat16FromFloat32(v).Float64())
	p := kernel.ToBFloat16x2(v, -v)
	f := p.Float2()
	o[5], o[6] = f.X, f.Y
	q := kernel.Half2{X: h[i], Y: kernel.Half(0x3c00)}
	g := q.Float2()
	o[7], o[8] = g.X, g.Y
	o[9] = kernel.ToTF32(v)
	o[10] = 0
	if h[i].IsNaN() || b[i].IsInf() || e4[i].IsNaN() || e5[i].Signbit() {
		o[10] = 1
	}
	o[11] = kernel.Half2FromBits(kernel.PackHalf2(v, 1)).X.Float32()
	bits[i*2] = kernel.PackBFloat16x2(v, 2*v)
	bits[i*2+1] = uint32(uint16(b[i])) | kernel.BFloat16x2FromBits(q.Bits()).Bits()&0xffff0000
}

// Wide copies eight halves at a time through Half8 and BFloat16x8.
//
//gocu:kernel
func Wide(t *kernel.Thread, src []kernel.Half, dst []kernel.Half, bs []kernel.BFloat16, bd []kernel.BFloat16) {
	i := t.Index()
	s8 := kernel.Reinterpret[kernel.Half8](src)
	d8 := kernel.Reinterpret[kernel.Half8](dst)
	b8 := kernel.Reinterpret[kernel.BFloat16x8](bs)
	c8 := kernel.Reinterpret[kernel.BFloat16x8](bd)
	if i < int32(len(s8)) {
		v := s8[i]
		v[7] = v[0]
		d8[i] = v
		c8[i] = b8[i]
	}
}

// Tile computes one 16x8 tile c = a b per warp with bf16 and fp16 tensor
// cores (a 16x16 row-major, b 16x8 row-major), loading through CpAsync
// and LdMatrix, and the tf32 product of the first 8 columns of a and rows
// of b. Launch one block of 32 threads.
//
//gocu:kernel
func Tile(t *kernel.Thread, a, b []kernel.BFloat16, ah, bh []kernel.Half, c, ch, ct []float32) {
	as := kernel.Shared[[16 * 16]kernel.BFloat16](t)
	bsh := kernel.Shared[[16 * 8]kernel.BFloat16](t)
	ahs := kernel.Shared[[16 * 16]kernel.Half](t)
	bhs := kernel.Shared[[16 * 8]kernel.Half](t)
	l := t.LaneID()
	kernel.CpAsync(t, as[l*8:], a[l*8:])
	kernel.CpAsync(t, ahs[l*8:], ah[l*8:])
	kernel.CpAsyncZfill(t, bsh[(l%16)*8:], b[(l%16)*8:], l < 16)
	kernel.CpAsyncCommit(t)
	if l < 16 {
		kernel.CpAsync(t, bhs[l*8:], bh[l*8:])
	}
	kernel.CpAsyncCommit(t)
	kernel.CpAsyncWait(t, 1)
	kernel.CpAsyncWait(t, 0)
	t.SyncThreads()

	fa := kernel.LdMatrixX4(t, as[(l%16)*16+(l/16)*8:])
	fb := kernel.LdMatrixX2Trans(t, bsh[(l%16)*8:])
	var acc kernel.FragC
	acc = kernel.MMABF16(t, fa, fb, acc)
	g, q := l/4, l%4
	for r := int32(0); r < 4; r++ {
		c[(g+8*(r/2))*8+2*q+r%2] = acc[r]
	}

	ha := kernel.LdMatrixX4(t, ahs[(l%16)*16+(l/16)*8:])
	hb0 := kernel.LdMatrixX1Trans(t, bhs[(l%8)*8:])
	hb1 := kernel.LdMatrixX1Trans(t, bhs[(8+l%8)*8:])
	var hc kernel.FragC
	hc = kernel.MMAF16(t, ha, kernel.FragB{hb0, hb1}, hc)
	for r := int32(0); r < 4; r++ {
		ch[(g+8*(r/2))*8+2*q+r%2] = hc[r]
	}

	// tf32 from the bf16 values, by fragment ownership.
	fa32 := kernel.FragATF32{as[g*16+q].Float32(), as[(g+8)*16+q].Float32(), as[g*16+q+4].Float32(), as[(g+8)*16+q+4].Float32()}
	fb32 := kernel.FragBTF32{bsh[q*8+g].Float32(), bsh[(q+4)*8+g].Float32()}
	var tc kernel.FragC
	tc = kernel.MMATF32(t, fa32, fb32, tc)
	for r := int32(0); r < 4; r++ {
		ct[(g+8*(r/2))*8+2*q+r%2] = tc[r]
	}
	// The other forms, for the compile check.
	x2 := kernel.LdMatrixX2(t, as[(l%16)*16:])
	x1 := kernel.LdMatrixX1(t, as[(l%8)*16:])
	x4t := kernel.LdMatrixX4Trans(t, as[(l%16)*16+(l/16)*8:])
	x2t := kernel.LdMatrixX2Trans(t, as[(l%16)*16:])
	if x2[0]+x1+x4t[3]+x2t[1] == 0x12345678 {
		c[0] = 0
	}
}

// FastExp2 is kernel.FastExp2, PTX ex2.approx.ftz.f32.
//
//gocu:kernel
func FastExp2(t *kernel.Thread, x, y []float32) {
	if i := t.Index(); i < int32(len(x)) {
		y[i] = kernel.FastExp2(x[i])
	}
}

// WGTile is one warpgroup's 64 x 128 x 16 product through shared memory
// with the warpgroup MMA, and A from registers (compiled, not run: the
// PTX check).
//
//gocu:kernel
func WGTile(t *kernel.Thread, a, b []kernel.BFloat16, c []float32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	i := t.ThreadIdx.X
	kernel.CpAsync(t, sm[i*8:], a[i*8:])
	kernel.CpAsyncCommit(t)
	kernel.CpAsyncWait(t, 0)
	kernel.FenceProxyAsync(t)
	t.SyncThreads()
	da := kernel.WGDescriptor(t, sm, kernel.WGSwizzle128, 16, 1024)
	db := kernel.WGDescriptor(t, sm[4096:], kernel.WGSwizzle64, 2048, 512)
	var acc kernel.WGAcc128
	var acc2 kernel.WGAcc64
	kernel.WGFence(t)
	kernel.WGMMABF16(t, &acc, da, db, true, false)
	kernel.WGMMAF16(t, &acc2, da+2, db, false, true)
	fa := kernel.FragA{uint32(i), uint32(i) << 16, 1, 2}
	kernel.WGMMABF16RS(t, &acc, fa, db+4, true, true)
	kernel.WGMMAF16RS(t, &acc2, fa, db, false, true)
	kernel.WGCommit(t)
	kernel.WGWait(t, 1, &acc)
	kernel.WGWait(t, 0, &acc2)
	c[i] = acc[0] + acc2[31]
}

// NamedBar hands x over from a producer warpgroup, which gives up
// registers, to two consumer warpgroups, which take them.
//
//gocu:kernel
//gocu:launch_bounds 384 1
func NamedBar(t *kernel.Thread, x []float32) {
	i := t.ThreadIdx.X
	if i < 128 {
		kernel.SetMaxNReg(t, 24, false)
		x[i] = float32(i)
		kernel.BarArrive(t, 1, 384)
	} else {
		kernel.SetMaxNReg(t, 240, true)
		kernel.BarSync(t, 1, 384)
		x[i] = 2 * x[i%128]
	}
}

// BulkTile is the tile of BulkSum: 128 float32, 512 bytes.
const BulkTile = 128

// BulkSum is a double-buffered pipeline: thread 128 copies tile after tile
// of x (tiles per block) into two shared buffers with CpAsyncBulk,
// announcing the bytes on the buffer's full barrier; threads 0-127 wait
// for it, each adds one element of the tile (another thread's each round),
// and arrive at the buffer's empty barrier, which the producer waits for
// before it refills the buffer. out holds 128 sums per block.
//
//gocu:kernel
func BulkSum(t *kernel.Thread, x, out []float32, tiles int32) {
	buf := kernel.Shared[[2][BulkTile]float32](t)
	bars := kernel.Shared[[4]kernel.MBarrier](t) // full 0, 1; empty 0, 1
	tid := t.ThreadIdx.X
	if tid == 0 {
		kernel.MBarInit(t, &bars[0], 1)
		kernel.MBarInit(t, &bars[1], 1)
		kernel.MBarInit(t, &bars[2], BulkTile)
		kernel.MBarInit(t, &bars[3], BulkTile)
	}
	t.SyncThreads()
	base := t.BlockIdx.X * tiles * BulkTile
	if tid >= BulkTile {
		if tid == BulkTile {
			for k := range tiles {
				s := k % 2
				if k >= 2 {
					kernel.MBarWait(t, &bars[2+s], uint32(k/2-1)&1)
				}
				kernel.MBarArriveExpectTx(t, &bars[s], BulkTile*4)
				lo := base + k*BulkTile
				kernel.CpAsyncBulk(t, buf[s][:], x[lo:lo+BulkTile], &bars[s])
			}
		}
		return
	}
	var acc float32
	for k := range tiles {
		s := k % 2
		kernel.MBarWait(t, &bars[s], uint32(k/2)&1)
		acc += buf[s][(tid+k)%BulkTile]
		kernel.MBarArrive(t, &bars[2+s])
	}
	out[t.BlockIdx.X*BulkTile+tid] = acc
}
