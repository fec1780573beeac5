package sim_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// aligned16 returns n zero elements starting at a 16-byte aligned address,
// as cudaMalloc gives.
func aligned16[T any](n int) []T {
	var z T
	s := make([]T, n+16)
	for uintptr(unsafe.Pointer(&s[0]))%16 != 0 {
		s = s[1:]
	}
	_ = z
	return s[:n:n]
}

func randBF16(r *rand.Rand, n int) []kernel.BFloat16 {
	s := aligned16[kernel.BFloat16](n)
	for i := range s {
		s[i] = kernel.ToBFloat16(float32(r.NormFloat64()))
	}
	return s
}

// mmaTile is one warp's 16x8x16 product c = a b + c0, with a (16x16) and b
// (16x8, k rows of n) row-major in global memory: both go through shared
// memory by CpAsync, a is loaded with LdMatrixX4, b with LdMatrixX2Trans.
func mmaTile(t *kernel.Thread, a, b []kernel.BFloat16, c0, c []float32) {
	as := kernel.Shared[[16 * 16]kernel.BFloat16](t)
	bs := kernel.Shared[[16 * 8]kernel.BFloat16](t)
	l := t.LaneID()
	kernel.CpAsync(t, as[l*8:], a[l*8:]) // 32 lanes x 16 bytes = a
	if l < 16 {
		kernel.CpAsync(t, bs[l*8:], b[l*8:])
	}
	kernel.CpAsyncCommit(t)
	kernel.CpAsyncWait(t, 0)
	t.SyncThreads()
	fa := kernel.LdMatrixX4(t, as[(l%16)*16+(l/16)*8:])
	fb := kernel.LdMatrixX2Trans(t, bs[(l%16)*8:])
	g, q := l/4, l%4
	var acc kernel.FragC
	for r := range int32(4) {
		acc[r] = c0[(g+8*(r/2))*8+2*q+r%2]
	}
	acc = kernel.MMABF16(t, fa, fb, acc)
	for r := range int32(4) {
		c[(g+8*(r/2))*8+2*q+r%2] = acc[r]
	}
}

func TestMMABF16(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := randBF16(r, 256), randBF16(r, 128)
	c0, c := make([]float32, 128), make([]float32, 128)
	for i := range c0 {
		c0[i] = float32(r.NormFloat64())
	}
	if err := launch(d1(1), d1(32), func(th *kernel.Thread) { mmaTile(th, a, b, c0, c) }); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		for j := range 8 {
			s := float64(c0[i*8+j])
			for k := range 16 {
				s += float64(a[i*16+k].Float32()) * float64(b[k*8+j].Float32())
			}
			if got := c[i*8+j]; got != float32(s) {
				t.Fatalf("c[%d][%d] = %v, want %v", i, j, got, float32(s))
			}
		}
	}
}

// TestFragmentOwnership builds the fragments from global memory by the PTX
// ISA's tables, without LdMatrix, and checks the product: a kernel that
// touches fragment elements directly gets the GPU's answer.
func TestFragmentOwnership(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := randBF16(r, 256), randBF16(r, 128)
	for _, tf32 := range []bool{false, true} {
		c := make([]float32, 128)
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			l := th.LaneID()
			g, q := l/4, l%4
			var d kernel.FragC
			if tf32 { // a as 16x8 (its first 8 columns), b as 8x8 (its first 8 rows)
				fa := kernel.FragATF32{a[g*16+q].Float32(), a[(g+8)*16+q].Float32(), a[g*16+q+4].Float32(), a[(g+8)*16+q+4].Float32()}
				fb := kernel.FragBTF32{b[q*8+g].Float32(), b[(q+4)*8+g].Float32()}
				d = kernel.MMATF32(th, fa, fb, d)
			} else {
				pair := func(x, y kernel.BFloat16) uint32 { return kernel.BFloat16x2{X: x, Y: y}.Bits() }
				fa := kernel.FragA{
					pair(a[g*16+2*q], a[g*16+2*q+1]), pair(a[(g+8)*16+2*q], a[(g+8)*16+2*q+1]),
					pair(a[g*16+2*q+8], a[g*16+2*q+9]), pair(a[(g+8)*16+2*q+8], a[(g+8)*16+2*q+9]),
				}
				fb := kernel.FragB{pair(b[2*q*8+g], b[(2*q+1)*8+g]), pair(b[(2*q+8)*8+g], b[(2*q+9)*8+g])}
				d = kernel.MMABF16(th, fa, fb, d)
			}
			for r := range int32(4) {
				c[(g+8*(r/2))*8+2*q+r%2] = d[r]
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		kk := 16
		if tf32 {
			kk = 8
		}
		for i := range 16 {
			for j := range 8 {
				s := 0.0
				for k := range kk {
					s += float64(a[i*16+k].Float32()) * float64(b[k*8+j].Float32())
				}
				if got := c[i*8+j]; got != float32(s) {
					t.Fatalf("tf32=%v: c[%d][%d] = %v, want %v", tf32, i, j, got, float32(s))
				}
			}
		}
	}
}

func TestLdMatrixLayouts(t *testing.T) {
	// A 32x8 tile of distinct values: four 8x8 matrices stacked.
	src := aligned16[uint16](256)
	for i := range src {
		src[i] = uint16(i)
	}
	got := make([][4]uint32, 32)
	gotT := make([][4]uint32, 32)
	err := launch(d1(1), d1(32), func(th *kernel.Thread) {
		s := kernel.Shared[[256]uint16](th)
		l := th.LaneID()
		for i := l; i < 256; i += 32 {
			s[i] = src[i]
		}
		th.SyncThreads()
		got[l] = kernel.LdMatrixX4(th, s[l*8:])
		gotT[l] = kernel.LdMatrixX4Trans(th, s[l*8:])
	})
	if err != nil {
		t.Fatal(err)
	}
	for l := range 32 {
		for m := range 4 {
			row, col := m*8+l/4, 2*(l%4)
			want := uint32(row*8+col) | uint32(row*8+col+1)<<16
			if got[l][m] != want {
				t.Fatalf("lane %d matrix %d: %#x, want %#x", l, m, got[l][m], want)
			}
			r0, c0 := m*8+2*(l%4), l/4
			wantT := uint32(r0*8+c0) | uint32((r0+1)*8+c0)<<16
			if gotT[l][m] != wantT {
				t.Fatalf("trans lane %d matrix %d: %#x, want %#x", l, m, gotT[l][m], wantT)
			}
		}
	}
}

func TestMatrixErrors(t *testing.T) {
	a := aligned16[kernel.BFloat16](512)
	t.Run("divergent MMA", func(t *testing.T) {
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			if th.LaneID() == 5 {
				return
			}
			kernel.MMABF16(th, kernel.FragA{}, kernel.FragB{}, kernel.FragC{}) // line: mma
		})
		e := wantErr(t, err, sim.KindWarp)
		wantPos(t, e.Pos, line(t, "mma"))
		if !strings.Contains(e.Msg, "MMABF16") || !strings.Contains(e.Msg, "lane 5 returned") {
			t.Errorf("message: %v", err)
		}
	})
	t.Run("partial warp", func(t *testing.T) {
		err := launch(d1(1), d1(48), func(th *kernel.Thread) {
			kernel.MMAF16(th, kernel.FragA{}, kernel.FragB{}, kernel.FragC{})
		})
		if e := wantErr(t, err, sim.KindWarp); !strings.Contains(e.Msg, "full warp") {
			t.Errorf("message: %v", err)
		}
	})
	t.Run("mixed operations", func(t *testing.T) {
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			if th.LaneID() < 16 {
				kernel.MMAF16(th, kernel.FragA{}, kernel.FragB{}, kernel.FragC{})
			} else {
				kernel.MMABF16(th, kernel.FragA{}, kernel.FragB{}, kernel.FragC{})
			}
		})
		wantErr(t, err, sim.KindWarp)
	})
	t.Run("misaligned LdMatrix", func(t *testing.T) {
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			s := kernel.Shared[[512]kernel.BFloat16](th)
			kernel.LdMatrixX4(th, s[th.LaneID()*8+1:]) // line: ldm
		})
		e := wantErr(t, err, sim.KindMisaligned)
		wantPos(t, e.Pos, line(t, "ldm"))
	})
	t.Run("LdMatrix of global memory", func(t *testing.T) {
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			kernel.LdMatrixX4(th, a[th.LaneID()*8:]) // line: ldg
		})
		e := wantErr(t, err, sim.KindUsage)
		wantPos(t, e.Pos, line(t, "ldg"))
	})
	t.Run("LdMatrix before the wait", func(t *testing.T) {
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			s := kernel.Shared[[512]kernel.BFloat16](th)
			l := th.LaneID()
			kernel.CpAsync(th, s[l*8:], a[l*8:]) // line: issue
			kernel.CpAsyncCommit(th)
			kernel.LdMatrixX4(th, s[l*8:]) // line: early
			kernel.CpAsyncWait(th, 0)
		})
		e := wantErr(t, err, sim.KindAsyncCopy)
		wantPos(t, e.Pos, line(t, "early"))
		if e.Other == nil || e.Other.Op != "CpAsync" {
			t.Fatalf("other party: %+v (%v)", e.Other, err)
		}
		wantPos(t, e.Other.Pos, line(t, "issue"))
	})
	t.Run("wait keeps the newest groups in flight", func(t *testing.T) {
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			s := kernel.Shared[[512]kernel.BFloat16](th)
			l := th.LaneID()
			kernel.CpAsync(th, s[l*8:], a[l*8:])
			kernel.CpAsyncCommit(th)
			kernel.CpAsync(th, s[256+l*8:], a[256+l*8:])
			kernel.CpAsyncCommit(th)
			kernel.CpAsyncWait(th, 1)
			th.SyncThreads()
			kernel.LdMatrixX4(th, s[(l%16)*16:]) // the first group: fine
			kernel.LdMatrixX4(th, s[256+l*8:])   // line: second
		})
		e := wantErr(t, err, sim.KindAsyncCopy)
		wantPos(t, e.Pos, line(t, "second"))
	})
	t.Run("zero fill", func(t *testing.T) {
		out := make([]float32, 32)
		err := launch(d1(1), d1(32), func(th *kernel.Thread) {
			s := kernel.Shared[[128]float32](th)
			l := th.LaneID()
			kernel.CpAsyncZfill(th, s[l*4:], []float32(nil), false)
			kernel.CpAsyncCommit(th)
			kernel.CpAsyncWait(th, 0)
			th.SyncThreads()
			out[l] = s[(l*7)%128]
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range out {
			if v != 0 {
				t.Fatalf("out[%d] = %v", i, v)
			}
		}
	})
}

func TestToTF32(t *testing.T) {
	for _, c := range []struct{ in, want float32 }{
		{1, 1}, {1 + 0x1p-11, 1 + 0x1p-10}, {1 + 0x1p-12, 1}, {-(1 + 0x1p-11), -(1 + 0x1p-10)},
	} {
		if got := kernel.ToTF32(c.in); got != c.want {
			t.Errorf("ToTF32(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsInf(float64(kernel.ToTF32(float32(math.Inf(1)))), 1) {
		t.Error("Inf")
	}
}
