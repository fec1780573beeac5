package sim_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// wgLayout places the elements of a wgmma operand in shared memory: byte
// offset (before the swizzle) of element (mn, k) of a tile whose k-slice
// ks starts kstep bytes after the previous one. It is written from the
// PTX ISA's canonical layouts independently of package kernel.
type wgLayout struct {
	sw       kernel.WGSwizzle
	mnMajor  bool
	lbo, sbo int32
	kstep    int32
}

func (l wgLayout) offset(mn, k int) int32 {
	ks, kk := int32(k/16), int32(k%16)
	m := int32(mn)
	s := map[kernel.WGSwizzle]int32{kernel.WGSwizzle128: 128, kernel.WGSwizzle64: 64, kernel.WGSwizzle32: 32}[l.sw]
	var off int32
	switch {
	case !l.mnMajor && l.sw == kernel.WGInterleave: // 8x8 core matrices
		off = m/8*l.sbo + m%8*16 + kk/8*l.lbo + kk%8*2
	case !l.mnMajor:
		off = m/8*l.sbo + m%8*s + kk*2
	case l.sw == kernel.WGInterleave:
		off = m/8*l.sbo + m%8*2 + kk%8*16 + kk/8*l.lbo
	default:
		e := s / 2
		off = m/e*l.lbo + m%e*2 + kk%8*s + kk/8*l.sbo
	}
	return ks*l.kstep + off
}

// swizzled applies the layout's swizzle to a shared address.
func (l wgLayout) swizzled(a int32) int32 {
	switch l.sw {
	case kernel.WGSwizzle128:
		return a ^ (a >> 3 & 0x70)
	case kernel.WGSwizzle64:
		return a ^ (a >> 3 & 0x30)
	case kernel.WGSwizzle32:
		return a ^ (a >> 3 & 0x10)
	}
	return a
}

const wgBOff = 8192 // b's tile starts here, 1024-aligned

// wgTile is one warpgroup's 64 x 64 x 32 product d = a b in two k-steps,
// a (64 x 32) and b (32 x 64) row-major in global memory placed into
// shared memory by the layouts, with plain stores.
func wgTile(t *kernel.Thread, la, lb wgLayout, a, b []kernel.BFloat16, d []float32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	for i := t.ThreadIdx.X; i < 64*32; i += 128 {
		m, k := int(i/32), int(i%32)
		sm[la.swizzled(la.offset(m, k))/2] = a[i]
		k2, n := int(i/64), int(i%64)
		sm[lb.swizzled(wgBOff+lb.offset(n, k2))/2] = b[i]
	}
	kernel.FenceProxyAsync(t)
	t.SyncThreads()
	da := kernel.WGDescriptor(t, sm, la.sw, la.lbo, la.sbo)
	db := kernel.WGDescriptor(t, sm[wgBOff/2:], lb.sw, lb.lbo, lb.sbo)
	var acc kernel.WGAcc64
	kernel.WGFence(t)
	for ks := range int32(2) {
		if lb.mnMajor {
			kernel.WGMMABF16(t, &acc, da+kernel.WGDesc(ks*la.kstep/16), db+kernel.WGDesc(ks*lb.kstep/16), true, ks > 0)
		} else {
			kernel.WGMMABF16(t, &acc, da+kernel.WGDesc(ks*la.kstep/16), db+kernel.WGDesc(ks*lb.kstep/16), false, ks > 0)
		}
	}
	kernel.WGCommit(t)
	kernel.WGWait(t, 0, &acc)
	w, l := t.ThreadIdx.X/32, t.ThreadIdx.X%32
	g, q := l/4, l%4
	for j := range int32(8) {
		for r := range int32(4) {
			d[(16*w+g+8*(r/2))*64+8*j+2*q+r%2] = acc[4*j+r]
		}
	}
}

func TestWGMMALayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := randBF16(r, 64*32), randBF16(r, 32*64)
	want := make([]float32, 64*64)
	for i := range 64 {
		for j := range 64 {
			// Two k-steps, each rounded once to float32.
			var acc float32
			for ks := range 2 {
				s := float64(acc)
				for k := 16 * ks; k < 16*ks+16; k++ {
					s += float64(a[i*32+k].Float32()) * float64(b[k*64+j].Float32())
				}
				acc = float32(s)
			}
			want[i*64+j] = acc
		}
	}
	for name, c := range map[string][2]wgLayout{
		// a: 128-byte rows of k, 8-row groups 1024 apart, k-step 32 bytes;
		// b: rows of n (64 = one 128-byte line), 8-row groups of k 1024
		// apart, k-step 16 rows.
		"K128/MN128": {{sw: kernel.WGSwizzle128, lbo: 16, sbo: 1024, kstep: 32}, {sw: kernel.WGSwizzle128, mnMajor: true, lbo: 8192, sbo: 1024, kstep: 2048}},
		// 64-byte rows of k (32 elements: the whole k), b stored n-major too.
		"K64/K64": {{sw: kernel.WGSwizzle64, lbo: 16, sbo: 512, kstep: 32}, {sw: kernel.WGSwizzle64, lbo: 16, sbo: 512, kstep: 32}},
		// 32-byte rows (one k-step each: k-steps 8 rows of 32 bytes apart
		// would collide, so 64 rows), b MN-major in 32-element blocks.
		"K32/MN64": {{sw: kernel.WGSwizzle32, lbo: 16, sbo: 256, kstep: 2048}, {sw: kernel.WGSwizzle64, mnMajor: true, lbo: 2048, sbo: 512, kstep: 1024}},
		// Core matrices of 8 rows of 16 bytes.
		"Interleave": {{lbo: 128, sbo: 512, kstep: 256}, {mnMajor: true, lbo: 128, sbo: 512, kstep: 256}},
	} {
		t.Run(name, func(t *testing.T) {
			d := make([]float32, 64*64)
			err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(128), DynamicSharedBytes: 16384 + wgBOff},
				sim.Kernel{Name: "wg", Func: func(th *kernel.Thread) { wgTile(th, c[0], c[1], a, b, d) }})
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range d {
				if v != want[i] {
					t.Fatalf("d[%d][%d] = %v, want %v", i/64, i%64, v, want[i])
				}
			}
		})
	}
}

// TestWGMMAErrors: the simulator reports what the GPU would silently get
// wrong.
func TestWGMMAErrors(t *testing.T) {
	cfg := sim.Config{Grid: d1(1), Block: d1(128), DynamicSharedBytes: 16384}
	run := func(f func(t *kernel.Thread, sm []kernel.BFloat16, da, db kernel.WGDesc, acc *kernel.WGAcc64)) error {
		return sim.Launch(cfg, sim.Kernel{Name: "wg", Func: func(t *kernel.Thread) {
			sm := kernel.DynamicShared[kernel.BFloat16](t)
			for i := t.ThreadIdx.X; i < int32(len(sm)); i += 128 {
				sm[i] = kernel.ToBFloat16(1)
			}
			kernel.FenceProxyAsync(t)
			t.SyncThreads()
			var acc kernel.WGAcc64
			f(t, sm, kernel.WGDescriptor(t, sm, kernel.WGSwizzle128, 16, 1024), kernel.WGDescriptor(t, sm[4096:], kernel.WGSwizzle128, 8192, 1024), &acc)
		}})
	}
	t.Run("no fence", func(t *testing.T) {
		err := run(func(t *kernel.Thread, _ []kernel.BFloat16, da, db kernel.WGDesc, acc *kernel.WGAcc64) {
			kernel.WGMMABF16(t, acc, da, db, true, false)
		})
		if e := wantErr(t, err, sim.KindUsage); !strings.Contains(e.Msg, "without a WGFence") {
			t.Error(e)
		}
	})
	t.Run("read before wait", func(t *testing.T) {
		var got float32
		err := run(func(t *kernel.Thread, _ []kernel.BFloat16, da, db kernel.WGDesc, acc *kernel.WGAcc64) {
			kernel.WGFence(t)
			kernel.WGMMABF16(t, acc, da, db, true, false)
			kernel.WGCommit(t)
			if t.ThreadIdx.X == 0 {
				got = acc[0] // too early: NaN
			}
			kernel.WGWait(t, 0, acc)
			if t.ThreadIdx.X == 1 && acc[0] != 16 {
				panic("after the wait the accumulator holds the product")
			}
		})
		if err != nil || !math.IsNaN(float64(got)) {
			t.Errorf("err %v, accumulator before the wait %v, want NaN", err, got)
		}
	})
	t.Run("overwrite while read", func(t *testing.T) {
		err := run(func(t *kernel.Thread, sm []kernel.BFloat16, da, db kernel.WGDesc, acc *kernel.WGAcc64) {
			kernel.WGFence(t)
			kernel.WGMMABF16(t, acc, da, db, true, false)
			kernel.WGCommit(t)
			t.SyncThreads()
			src := aligned16[kernel.BFloat16](8)
			kernel.CpAsync(t, sm[t.ThreadIdx.X*8:], src) // rows of a the MMA still reads
			kernel.CpAsyncCommit(t)
			kernel.WGWait(t, 0, acc)
		})
		if e := wantErr(t, err, sim.KindAsyncCopy); !strings.Contains(e.Msg, "a WGMMA is still reading") {
			t.Error(e)
		}
	})
	t.Run("no proxy fence", func(t *testing.T) {
		err := run(func(t *kernel.Thread, sm []kernel.BFloat16, da, db kernel.WGDesc, acc *kernel.WGAcc64) {
			src := aligned16[kernel.BFloat16](8)
			kernel.CpAsync(t, sm[t.ThreadIdx.X*8:], src)
			kernel.CpAsyncCommit(t)
			kernel.CpAsyncWait(t, 0)
			t.SyncThreads() // but no FenceProxyAsync
			kernel.WGFence(t)
			kernel.WGMMABF16(t, acc, da, db, true, false)
			kernel.WGCommit(t)
			kernel.WGWait(t, 0, acc)
		})
		if e := wantErr(t, err, sim.KindAsyncCopy); !strings.Contains(e.Msg, "FenceProxyAsync") {
			t.Error(e)
		}
	})
	t.Run("descriptor outside shared memory", func(t *testing.T) {
		err := run(func(t *kernel.Thread, _ []kernel.BFloat16, da, db kernel.WGDesc, acc *kernel.WGAcc64) {
			kernel.WGFence(t)
			kernel.WGMMABF16(t, acc, da, db+kernel.WGDesc(1000), true, false)
		})
		if e := wantErr(t, err, sim.KindUsage); !strings.Contains(e.Msg, "outside the block's") {
			t.Error(e)
		}
	})
}

// TestWGMMARS checks WGMMABF16RS, A in registers: the 64 x 64 x 32 product
// of TestWGMMALayouts with each warp's rows of a as MMABF16's A fragments
// (register r of lane (g, q): row g+8(r&1), columns 2q+8(r>>1), +1) and b
// MN-major with the 128-byte swizzle.
func TestWGMMARS(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randBF16(r, 64*32), randBF16(r, 32*64)
	want := make([]float32, 64*64)
	for i := range 64 {
		for j := range 64 {
			var acc float32
			for ks := range 2 {
				s := float64(acc)
				for k := 16 * ks; k < 16*ks+16; k++ {
					s += float64(a[i*32+k].Float32()) * float64(b[k*64+j].Float32())
				}
				acc = float32(s)
			}
			want[i*64+j] = acc
		}
	}
	lb := wgLayout{sw: kernel.WGSwizzle128, mnMajor: true, lbo: 8192, sbo: 1024, kstep: 2048}
	d := make([]float32, 64*64)
	err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(128), DynamicSharedBytes: 8192},
		sim.Kernel{Name: "wgrs", Func: func(th *kernel.Thread) {
			sm := kernel.DynamicShared[kernel.BFloat16](th)
			for i := th.ThreadIdx.X; i < 32*64; i += 128 {
				k, n := int(i/64), int(i%64)
				sm[lb.swizzled(lb.offset(n, k))/2] = b[i]
			}
			kernel.FenceProxyAsync(th)
			th.SyncThreads()
			w, l := th.ThreadIdx.X/32, th.ThreadIdx.X%32
			g, q := l/4, l%4
			db := kernel.WGDescriptor(th, sm, lb.sw, lb.lbo, lb.sbo)
			var acc kernel.WGAcc64
			kernel.WGFence(th)
			for ks := range int32(2) {
				var fa kernel.FragA
				for reg := range int32(4) {
					row, col := 16*w+g+8*(reg&1), 16*ks+2*q+8*(reg>>1)
					fa[reg] = uint32(a[row*32+col]) | uint32(a[row*32+col+1])<<16
				}
				kernel.WGMMABF16RS(th, &acc, fa, db+kernel.WGDesc(ks*lb.kstep/16), true, ks > 0)
			}
			kernel.WGCommit(th)
			kernel.WGWait(th, 0, &acc)
			for j := range int32(8) {
				for reg := range int32(4) {
					d[(16*w+g+8*(reg/2))*64+8*j+2*q+reg%2] = acc[4*j+reg]
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range d {
		if v != want[i] {
			t.Fatalf("d[%d][%d] = %v, want %v", i/64, i%64, v, want[i])
		}
	}
}
