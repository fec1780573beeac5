package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gocu-dev/gocu/array"
)

// The indexing workloads of the "numpy" suite (issue 19): a take by
// random indices, an embedding's gather and scatter-add backward, nonzero
// and a boolean mask, with baseline_numpy.py's CuPy and torch figures as
// peers on the GPU. Nonzero and the mask wait for the device to count the
// selected elements, as CuPy does.

// ixSizes are the indexing workloads' sizes on one device.
type ixSizes struct {
	vec, vecSmall     int // take, nonzero, mask
	vocab, vocabSmall int // embedding rows
	dim, tokens       int // embedding width and the rows gathered
	doc               string
}

var (
	gpuIx = ixSizes{vec: 1 << 26, vecSmall: 1 << 16, vocab: 50304, vocabSmall: 1000, dim: 768, tokens: 16384, doc: "2^26"}
	cpuIx = ixSizes{vec: 1 << 22, vecSmall: 1 << 16, vocab: 50304, vocabSmall: 1000, dim: 768, tokens: 16384, doc: "2^22"}
)

func init() {
	for _, d := range []Device{CUDA, CPU} {
		sz := gpuIx
		if d == CPU {
			sz = cpuIx
		}
		peers := func(p ...Peer) []Peer {
			if d == CUDA {
				return p
			}
			return nil
		}
		suites := []string{"numpy"}
		Register(Workload{Name: "take_f32", Doc: fmt.Sprintf("array x.Take(idx, 0), %s float32 by as many random int64 indices", sz.doc),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"CuPy", "take_2p26_f32_cupy_ms", Millis}), Setup: setupTake(sz)})
		Register(Workload{Name: "embedding_gather", Doc: fmt.Sprintf("array emb.Take(tok, 0): %d random rows of %dx%d float32", sz.tokens, sz.vocab, sz.dim),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch", "embedding_gather_16k_of_50304x768_torch_ms", Millis}), Setup: setupEmbedding(sz, false)})
		Register(Workload{Name: "embedding_scatter_add", Doc: fmt.Sprintf("array ZerosLike(emb).IndexAdd(0, tok, g): %d rows of %d float32 into %d rows", sz.tokens, sz.dim, sz.vocab),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"torch", "embedding_scatter_add_16k_into_50304x768_torch_ms", Millis}), Setup: setupEmbedding(sz, true)})
		Register(Workload{Name: "nonzero_f32", Doc: fmt.Sprintf("array x.Gt(0).Nonzero() of %s float32, half of them positive (waits to count)", sz.doc),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"CuPy", "nonzero_2p26_half_cupy_ms", Millis}), Setup: setupMask(sz, false)})
		Register(Workload{Name: "boolean_mask_f32", Doc: fmt.Sprintf("array x.Mask(x.Gt(0)) of %s float32 (waits to count)", sz.doc),
			Kind: Bandwidth, Devices: d, Suites: suites,
			Peers: peers(Peer{"CuPy", "boolean_mask_2p26_f32_cupy_ms", Millis}), Setup: setupMask(sz, true)})
	}
}

// ixIndices draws n int64 indices in [0, hi).
func ixIndices(r *rand.Rand, n, hi int) []int64 {
	x := make([]int64, n)
	seed := r.Uint64()
	parallel(n, 1<<16, func(lo, up int) {
		g := rand.New(rand.NewPCG(seed, uint64(lo)))
		for i := lo; i < up; i++ {
			x[i] = int64(g.IntN(hi))
		}
	})
	return x
}

// keepAny makes z the last result whatever its dtype.
func (a *arrays) keepAny(z *array.Array) error {
	if err := z.Err(); err != nil {
		return err
	}
	a.last = z
	return nil
}

func setupTake(sz ixSizes) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.vec, sz.vecSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		xh := randFloats(e.Rand, n)
		ih := ixIndices(e.Rand, n, n)
		x, err := a.input(xh)
		if err != nil {
			return nil, err
		}
		idx := array.FromSliceOn(a.dev.Device(), ih, n)
		a.in = append(a.in, idx)
		if err := a.poison(n); err != nil {
			return nil, errs(err, a.close())
		}
		return &Case{
			Run: a.run(func() *array.Array { return x.Take(idx, 0) }),
			Check: func() error {
				got, err := a.result()
				if err != nil {
					return err
				}
				return checkElems("x[idx]", got, n, func(i int) (float32, float64) { return xh[ih[i]], 0 })
			},
			Close: a.close, Stream: a.stream,
			Bytes: 16 * float64(n), // read the index (8) and the element (4), write 4
		}, nil
	}
}

func setupEmbedding(sz ixSizes, backward bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		rows := size(e, sz.vocab, sz.vocabSmall)
		dim, toks := sz.dim, size(e, sz.tokens, 256)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		th := ixIndices(e.Rand, toks, rows)
		tok := array.FromSliceOn(a.dev.Device(), th, toks)
		a.in = append(a.in, tok)
		if !backward {
			eh := randFloats(e.Rand, rows*dim)
			emb, err := a.input(eh, rows, dim)
			if err != nil {
				return nil, errs(err, a.close())
			}
			if err := a.poison(toks, dim); err != nil {
				return nil, errs(err, a.close())
			}
			return &Case{
				Run: a.run(func() *array.Array { return emb.Take(tok, 0) }),
				Check: func() error {
					got, err := a.result()
					if err != nil {
						return err
					}
					return checkElems("emb[tok]", got, toks*dim, func(i int) (float32, float64) { return eh[int(th[i/dim])*dim+i%dim], 0 })
				},
				Close: a.close, Stream: a.stream,
				Bytes: float64(8*toks + 2*4*toks*dim),
			}, nil
		}
		gh := randFloats(e.Rand, toks*dim)
		g, err := a.input(gh, toks, dim)
		if err != nil {
			return nil, errs(err, a.close())
		}
		zero := a.dev.Zeros(array.Float32, rows, dim).Eval()
		a.in = append(a.in, zero)
		if err := a.poison(rows, dim); err != nil {
			return nil, errs(err, a.close())
		}
		return &Case{
			Run: a.run(func() *array.Array { return array.ZerosLike(zero).IndexAdd(0, tok, g) }),
			Check: func() error {
				got, err := a.result()
				if err != nil {
					return err
				}
				want := make([]float64, rows*dim)
				for t, r := range th {
					for k := 0; k < dim; k++ {
						want[int(r)*dim+k] += float64(gh[t*dim+k])
					}
				}
				return checkElems("index_add", got, rows*dim, func(i int) (float32, float64) {
					return float32(want[i]), 1e-5 * math.Max(1, math.Abs(want[i]))
				})
			},
			Close: a.close, Stream: a.stream,
			// Write the zeros, read the index and the gradient, and
			// read-modify-write the updated rows.
			Bytes: float64(4*rows*dim + 8*toks + 3*4*toks*dim),
		}, nil
	}
}

func setupMask(sz ixSizes, mask bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, sz.vec, sz.vecSmall)
		a, err := newArrays(e)
		if err != nil {
			return nil, err
		}
		xh := randFloats(e.Rand, n)
		x, err := a.input(xh)
		if err != nil {
			return nil, err
		}
		var want []float32
		for i, v := range xh {
			if v > 0 {
				if mask {
					want = append(want, v)
				} else {
					want = append(want, float32(i))
				}
			}
		}
		if err := a.poison(len(want)); err != nil {
			return nil, errs(err, a.close())
		}
		run := func() error {
			a.release()
			m := x.Gt(0)
			defer m.Close()
			if mask {
				return errs2(a.keepAny(x.Mask(m)), a.sync())
			}
			nz := m.Nonzero()
			return errs2(a.keepAny(nz[0]), a.sync())
		}
		bytes := float64(5*n + 4*len(want)) // read x, the mask twice (count, write), write the result
		if !mask {
			bytes = float64(5*n + 8*len(want))
		}
		return &Case{
			Run: run,
			Check: func() error {
				if err := a.dev.Sync(); err != nil {
					return err
				}
				got, err := array.ToSlice[float32](a.last)
				if err != nil {
					return err
				}
				return checkElems("selection", got, len(want), func(i int) (float32, float64) { return want[i], 0 })
			},
			Close: a.close, Stream: a.stream,
			Bytes: bytes,
		}, nil
	}
}
