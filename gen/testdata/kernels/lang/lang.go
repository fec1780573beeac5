// Package lang holds kernels written in the Go a kernel author reaches for
// first: generic kernels and device functions, constant tables, methods
// with pointer receivers on shared-memory tiles, and printing.
package lang

import (
	"fmt"

	"github.com/gocu-dev/gocu/gen/testdata/kernels/util"
	"github.com/gocu-dev/gocu/kernel"
)

// Axpy computes y = a*x + y, for float32 and for float64.
//
//gocu:kernel
func Axpy[T kernel.Float](t *kernel.Thread, a T, x, y []T) {
	if i := t.Index(); i < int32(len(x)) {
		y[i] = fma(a, x[i], y[i])
	}
}

// fma is a generic device function: each instance of Axpy calls its own.
func fma[T kernel.Float](a, x, y T) T { return a*x + y }

// Celsius is a named float: LaunchAxpy[Celsius] runs Axpy[float32] on the
// GPU.
type Celsius float32

// Number is a constraint of the package's own.
type Number interface {
	~int32 | ~int64 | ~float32
}

// Clamp limits every element of x to [lo, hi], with a constant shifted by
// the type: T(1)/2 is 0 for the integers and 0.5 for float32.
//
//gocu:kernel
func Clamp[T Number](t *kernel.Thread, x []T, lo, hi T) {
	for i := t.Index(); i < int32(len(x)); i += t.Stride() {
		x[i] = min(max(x[i], lo), hi) + T(1)/2
	}
}

// Scale multiplies by a factor of another type, compiled only for the
// pairs its directive names.
//
//gocu:kernel
//gocu:instantiate Scale[float32, int32] Scale[float64, int64]
func Scale[T kernel.Float, S kernel.Integer](t *kernel.Thread, x []T, s S) {
	if i := t.Index(); i < int32(len(x)) {
		x[i] *= T(s)
		x[i] = util.Lerp(x[i], x[i]*2, 0.5)
	}
}

// mask is a constant table: the lecture's convolution mask, in constant
// memory on the GPU.
var mask = [5]float32{0.0625, 0.25, 0.375, 0.25, 0.0625}

// mask2 is a two-dimensional table.
var mask2 = [3][3]int32{
	{1, 2, 1},
	{2, 4, 2},
	{1, 2, 1},
}

// Conv1D convolves x with mask, treating elements outside x as zero.
//
//gocu:kernel
func Conv1D(t *kernel.Thread, x, y []float32) {
	i := t.Index()
	n := int32(len(x))
	if i >= n {
		return
	}
	var sum float32
	for k, w := range mask {
		if j := i + int32(k) - int32(len(mask)/2); j >= 0 && j < n {
			sum += w * x[j]
		}
	}
	// A table of another package.
	s := util.Smooth[0] + util.Smooth[1] + util.Smooth[2]
	y[i] = sum * s
}

// Conv2D convolves a w x h image with mask2, clamping at the edges.
//
//gocu:kernel
func Conv2D(t *kernel.Thread, in, out []int32, w, h int32) {
	x, y := t.Index2D()
	if x >= w || y >= h {
		return
	}
	var sum int32
	for dy := range int32(3) {
		for dx := range int32(3) {
			cx := min(max(x+dx-1, 0), w-1)
			cy := min(max(y+dy-1, 0), h-1)
			sum += mask2[dy][dx] * in[cy*w+cx]
		}
	}
	out[y*w+x] = sum
}

// TileSide is the side of a Tile.
const TileSide = 16

// Tile is a square of a matrix in shared memory, padded against bank
// conflicts.
type Tile [TileSide][TileSide + 1]float32

// Load copies the TileSide x TileSide block at (row, col) of an n x n
// matrix into the tile, zero outside the matrix.
func (m *Tile) Load(t *kernel.Thread, a []float32, row, col, n int32) {
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	if r, c := row+ty, col+tx; r < n && c < n {
		m[ty][tx] = a[r*n+c]
	} else {
		m[ty][tx] = 0
	}
}

// Transpose transposes the tile in place: each thread below the diagonal
// swaps its element with the mirrored one.
func (m *Tile) Transpose(t *kernel.Thread) {
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	if tx < ty {
		m[ty][tx], m[tx][ty] = m[tx][ty], m[ty][tx]
	}
}

// At reads an element; a value receiver called on the shared pointer.
func (m Tile) At(r, c int32) float32 { return m[r][c] }

// Stats is a struct in shared memory with pointer-receiver methods.
type Stats struct {
	Sum   float32
	Count int32
}

// Add adds v with atomics: s must point to shared (or global) memory.
func (s *Stats) Add(v float32) {
	kernel.AtomicAdd(&s.Sum, v)
	kernel.AtomicAdd(&s.Count, 1)
}

// addPlain adds v without atomics, for a thread's own copy.
func (s *Stats) addPlain(v float32) {
	s.Sum += v
	s.Count++
}

// reset zeroes the struct through its pointer.
func (s *Stats) reset() { *s = Stats{} }

// Transpose transposes an n x n matrix through a shared tile, whose
// methods load, transpose and read it.
//
//gocu:kernel
func Transpose(t *kernel.Thread, a, b []float32, n int32) {
	tile := kernel.Shared[Tile](t)
	stats := kernel.Shared[Stats](t)
	if t.ThreadIdx.X == 0 && t.ThreadIdx.Y == 0 {
		stats.reset()
	}
	bx, by := t.BlockIdx.X*TileSide, t.BlockIdx.Y*TileSide
	tile.Load(t, a, by, bx, n)
	t.SyncThreads()
	tile.Transpose(t)
	t.SyncThreads()
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	v := tile.At(ty, tx)
	stats.Add(v)
	var local Stats // a pointer receiver on a local variable
	local.addPlain(v)
	if r, c := bx+ty, by+tx; r < n && c < n {
		b[r*n+c] = v + 0*local.Sum
	}
	t.SyncThreads()
	if tx == 0 && ty == 0 && stats.Count != TileSide*TileSide {
		b[0] = -1
	}
}

// Debug prints from a few threads: fmt.Printf and kernel.Printf, with
// every kind of argument.
//
//gocu:kernel
func Debug(t *kernel.Thread, x []float32, n int64) {
	i := t.Index()
	if i%100 != 7 || i >= int32(len(x)) {
		return
	}
	fmt.Printf("i=%d n=%d x=%.3f ok=%t\n", i, n, x[i], x[i] > 0)
	kernel.Printf(t, "%5.1e|%-4d|%x|%X|%o|%c|%v%%\n", float64(x[i]), int8(i), uint32(i), -i, uint8(i), 'A'+rune(i%26), uint64(n))
	fmt.Println("block", t.BlockIdx.X, "sum", x[i]+1, true)
	fmt.Print(i, "!", n, "\n")
	report(t, i)
}

// report prints from a device function.
func report(t *kernel.Thread, i int32) {
	fmt.Printf("thread %d of block %d: \"done\"\t100%%\n", t.ThreadIdx.X, t.BlockIdx.X)
	_ = i
}

// BlockMax writes the largest element of each block's part of x to out,
// through a shared array of the type parameter's type.
//
//gocu:kernel
func BlockMax[T Number](t *kernel.Thread, x, out []T) {
	s := kernel.Shared[[128]T](t)
	i, r := t.Index(), t.ThreadIdx.X
	if i < int32(len(x)) {
		s[r] = x[i]
	} else {
		s[r] = x[0]
	}
	for step := int32(64); step > 0; step /= 2 {
		t.SyncThreads()
		if r < step {
			s[r] = max(s[r], s[r+step])
		}
	}
	if r == 0 {
		out[t.BlockIdx.X] = s[0]
	}
}
