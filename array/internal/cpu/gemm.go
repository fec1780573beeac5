package cpu

import "sync"

// A packed, blocked GEMM in the style of Goto and van de Geijn ("Anatomy of
// high-performance matrix multiplication", 2008): B is packed kc×nc into
// panels of nr columns, A mc×kc into panels of mr rows, and an AVX2/FMA
// micro-kernel keeps an mr×nr tile of C in registers for the whole kc loop.
// Packing reads the operands through arbitrary row and column strides, so
// transposed views cost nothing extra. Rows of C are split evenly over the
// workers; B panels are packed cooperatively.
//
// gonum's pure-Go Sgemm reached 25 GFLOP/s for 1024² on the 2-core
// development machine against 207 GFLOP/s for NumPy/OpenBLAS; this kernel
// is what closes that gap (see the package benchmarks).

type gemmElem interface{ ~float32 | ~float64 }

// gemmGeom holds the blocking of one element type.
type gemmGeom struct {
	mr, nr, kc, mc, nc int
}

var (
	sGeom = gemmGeom{mr: 6, nr: 16, kc: 256, mc: 96, nc: 2048}
	dGeom = gemmGeom{mr: 6, nr: 8, kc: 256, mc: 72, nc: 1024}
)

// mat is a strided matrix view.
type mat[T gemmElem] struct {
	d      []T
	off    int
	rs, cs int
}

func (m mat[T]) at(i, j int) T { return m.d[m.off+i*m.rs+j*m.cs] }

// gemm computes C = A·B (m×k times k×n) into C (row stride ldc, column
// stride 1), on up to workers goroutines.
func gemm[T gemmElem](workers int, g gemmGeom, kern func(kc int, a, bp, c *T, ldc, acc int), m, n, k int, A, B mat[T], C []T, cOff, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			clear(C[cOff+i*ldc : cOff+i*ldc+n])
		}
		return
	}
	if m*n*k < 1<<18 {
		workers = 1
	}
	workers = max(1, min(workers, (m+g.mr-1)/g.mr))
	nc := min(g.nc, (n+g.nr-1)/g.nr*g.nr)
	kc := min(g.kc, k)
	bp := make([]T, kc*nc)
	aps := make([][]T, workers)
	for w := range aps {
		aps[w] = make([]T, g.mc*kc)
	}
	// Row ranges per worker, multiples of mr.
	rowsPer := ((m+workers-1)/workers + g.mr - 1) / g.mr * g.mr
	var wg sync.WaitGroup
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		panels := (nb + g.nr - 1) / g.nr
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			// Pack B cooperatively.
			per := (panels + workers - 1) / workers
			for w := 0; w < workers; w++ {
				p0, p1 := w*per, min((w+1)*per, panels)
				if p0 >= p1 {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					packB(g, B, bp, pc, kb, jc, nb, p0, p1)
				}()
			}
			wg.Wait()
			acc := 0
			if pc > 0 {
				acc = 1
			}
			for w := 0; w < workers; w++ {
				r0, r1 := w*rowsPer, min((w+1)*rowsPer, m)
				if r0 >= r1 {
					continue
				}
				ap := aps[w]
				wg.Add(1)
				go func() {
					defer wg.Done()
					var tile [6 * 16]T
					for ic := r0; ic < r1; ic += g.mc {
						mb := min(g.mc, r1-ic)
						packA(g, A, ap, ic, mb, pc, kb)
						for jr := 0; jr < nb; jr += g.nr {
							nr := min(g.nr, nb-jr)
							bpan := &bp[(jr/g.nr)*kb*g.nr]
							for ir := 0; ir < mb; ir += g.mr {
								mr := min(g.mr, mb-ir)
								apan := &ap[(ir/g.mr)*kb*g.mr]
								ci := cOff + (ic+ir)*ldc + jc + jr
								if mr == g.mr && nr == g.nr {
									kern(kb, apan, bpan, &C[ci], ldc, acc)
									continue
								}
								kern(kb, apan, bpan, &tile[0], g.nr, 0)
								for i := 0; i < mr; i++ {
									row := C[ci+i*ldc : ci+i*ldc+nr]
									t := tile[i*g.nr : i*g.nr+nr]
									if acc != 0 {
										for j := range row {
											row[j] += t[j]
										}
									} else {
										copy(row, t)
									}
								}
							}
						}
					}
				}()
			}
			wg.Wait()
		}
	}
}

// packB packs columns [jc, jc+nb) panels p0..p1 of rows [pc, pc+kb) of B:
// panel p holds kb rows of nr values, zero-padded past nb.
func packB[T gemmElem](g gemmGeom, B mat[T], bp []T, pc, kb, jc, nb, p0, p1 int) {
	for p := p0; p < p1; p++ {
		dst := bp[p*kb*g.nr : (p+1)*kb*g.nr]
		j0 := jc + p*g.nr
		w := min(g.nr, jc+nb-j0)
		if B.cs == 1 {
			for kk := 0; kk < kb; kk++ {
				src := B.d[B.off+(pc+kk)*B.rs+j0:]
				d := dst[kk*g.nr : kk*g.nr+g.nr]
				copy(d[:w], src[:w])
				clear(d[w:])
			}
			continue
		}
		for kk := 0; kk < kb; kk++ {
			d := dst[kk*g.nr : kk*g.nr+g.nr]
			base := B.off + (pc+kk)*B.rs + j0*B.cs
			for j := 0; j < w; j++ {
				d[j] = B.d[base+j*B.cs]
			}
			clear(d[w:])
		}
	}
}

// packA packs rows [ic, ic+mb) and columns [pc, pc+kb) of A into panels of
// mr rows: panel q holds kb columns of mr values, zero-padded past mb.
func packA[T gemmElem](g gemmGeom, A mat[T], ap []T, ic, mb, pc, kb int) {
	for q := 0; q*g.mr < mb; q++ {
		dst := ap[q*kb*g.mr : (q+1)*kb*g.mr]
		i0 := ic + q*g.mr
		h := min(g.mr, ic+mb-i0)
		if h == 6 && g.mr == 6 && A.cs == 1 {
			// Row-major A: read six rows in step, write the panel in order.
			base := A.off + i0*A.rs + pc
			r0 := A.d[base : base+kb]
			r1 := A.d[base+A.rs : base+A.rs+kb]
			r2 := A.d[base+2*A.rs : base+2*A.rs+kb]
			r3 := A.d[base+3*A.rs : base+3*A.rs+kb]
			r4 := A.d[base+4*A.rs : base+4*A.rs+kb]
			r5 := A.d[base+5*A.rs : base+5*A.rs+kb]
			for kk := range r0 {
				d := dst[kk*6 : kk*6+6 : kk*6+6]
				d[0], d[1], d[2], d[3], d[4], d[5] = r0[kk], r1[kk], r2[kk], r3[kk], r4[kk], r5[kk]
			}
			continue
		}
		if A.rs == 1 {
			// Column-major A (a transposed view): each k is mr consecutive values.
			for kk := 0; kk < kb; kk++ {
				src := A.d[A.off+i0+(pc+kk)*A.cs:]
				d := dst[kk*g.mr : kk*g.mr+g.mr]
				copy(d[:h], src[:h])
				clear(d[h:])
			}
			continue
		}
		if h < g.mr {
			clear(dst)
		}
		for i := 0; i < h; i++ {
			base := A.off + (i0+i)*A.rs + pc*A.cs
			for kk := 0; kk < kb; kk++ {
				dst[kk*g.mr+i] = A.d[base+kk*A.cs]
			}
		}
	}
}

func sKernel(kc int, a, b, c *float32, ldc, acc int) { sgemm6x16(kc, a, b, c, ldc, acc) }
func dKernel(kc int, a, b, c *float64, ldc, acc int) { dgemm6x8(kc, a, b, c, ldc, acc) }
