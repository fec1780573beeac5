package frame

import (
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// Wide-key variants of the db-benchmark's q3 and big join: id3 spread over
// a range too wide to index directly (id3w = id3·1,000,000,007), so that
// grouping and joining go through the hash table on a GPU (and through a
// sort on the CPU). GOCU_FRAME_HASH=0 gives the sort-based paths on the GPU
// for comparison.

type wideBench struct{ x, big *Frame }

var wideCache sync.Map // device -> *wideBench

func wideBenchData(b *testing.B, dev *gocu.Device, d *benchData) *wideBench {
	if w, ok := wideCache.Load(dev); ok {
		return w.(*wideBench)
	}
	widen := func(f *Frame) *Frame {
		s, err := f.Column("id3")
		if err != nil {
			b.Fatal(err)
		}
		w := &Series{name: "id3w", kind: Number, n: s.n, dev: dev, data: s.data.AsType(array.Int64).Mul(int64(1_000_000_007))}
		if err := w.data.Err(); err != nil {
			b.Fatal(err)
		}
		g, err := f.WithColumn(w)
		if err != nil {
			b.Fatal(err)
		}
		if g, err = g.Drop("id3"); err != nil {
			b.Fatal(err)
		}
		if err := g.Eval(); err != nil {
			b.Fatal(err)
		}
		return g
	}
	w := &wideBench{x: widen(d.x), big: widen(d.big)}
	wideCache.Store(dev, w)
	return w
}

// BenchmarkGroupByQ3Wide is q3 (sum v1, mean v3) by the wide key id3w.
func BenchmarkGroupByQ3Wide(b *testing.B) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		w := wideBenchData(b, dev, d)
		b.ResetTimer()
		for b.Loop() {
			g, err := w.x.GroupBy("id3w").Agg(Sum("v1"), Mean("v3"))
			finish(b, dev, g, err)
		}
	})
}

// BenchmarkJoinBigInnerWide is the big inner join on the wide key id3w.
func BenchmarkJoinBigInnerWide(b *testing.B) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		w := wideBenchData(b, dev, d)
		b.ResetTimer()
		for b.Loop() {
			j, err := w.x.Join(w.big, Inner, "id3w")
			finish(b, dev, j, err)
		}
	})
}
