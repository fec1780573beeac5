package array

import (
	"runtime/metrics"
	"slices"
	"testing"
	"time"
)

// BenchmarkJitterGPU times single evaluations the way gocu bench does (one
// operation between two events, result closed before the next) and reports
// the spread: median, min, p90 and max, with the host's share, and how many
// repetitions saw a collection or an allocator miss. A median well above
// the min means something on the host stalls the stream.
func BenchmarkJitterGPU(b *testing.B) {
	g, x, y := benchGPUArrays(b)
	cases := []struct {
		name string
		f    func() *Array
	}{
		{"add", func() *Array { return x.Add(y).Eval() }},
		{"fused", func() *Array { return x.Mul(1.5).Add(0.5).ReLU().Mul(2).Eval() }},
		{"unfused", func() *Array {
			s := x.Mul(1.5).Eval()
			t := s.Add(0.5).Eval()
			s.Close()
			r := t.ReLU().Eval()
			t.Close()
			z := r.Mul(2).Eval()
			r.Close()
			return z
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { jitter(b, g, c.f) })
	}
}

func jitter(b *testing.B, g *Maker, f func() *Array) {
	tm := newGPUTimer(b, g)
	var last *Array
	run := func() {
		if last != nil {
			last.Close()
		}
		last = f()
	}
	for range 5 {
		run()
	}
	if err := g.Sync(); err != nil {
		b.Fatal(err)
	}
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	gcs := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	al := g.gpu.Device().Allocator()
	const reps = 200
	var ev, host, evGC, evNoGC []time.Duration
	misses, withGC := 0, 0
	for range max(b.N, 1) {
		for range reps {
			gc0, m0 := gcs(), al.Stats().Misses
			var h time.Duration
			d := tm.time(b, func() {
				t0 := time.Now()
				run()
				h = time.Since(t0)
			})
			ev, host = append(ev, d), append(host, h)
			if al.Stats().Misses != m0 {
				misses++
			}
			if gcs() != gc0 {
				withGC++
				evGC = append(evGC, d)
			} else {
				evNoGC = append(evNoGC, d)
			}
		}
	}
	last.Close()
	q := func(d []time.Duration, p float64) float64 {
		if len(d) == 0 {
			return 0
		}
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(q(ev, 0.5), "med-us")
	b.ReportMetric(q(ev, 0), "min-us")
	b.ReportMetric(q(ev, 0.9), "p90-us")
	b.ReportMetric(q(ev, 1), "max-us")
	b.ReportMetric(q(host, 0.5), "host-med-us")
	b.ReportMetric(q(host, 0.9), "host-p90-us")
	b.ReportMetric(q(host, 1), "host-max-us")
	b.ReportMetric(float64(withGC), "reps-with-gc")
	b.ReportMetric(float64(misses), "reps-with-miss")
	b.ReportMetric(q(evGC, 0.5), "gc-med-us")
	b.ReportMetric(q(evNoGC, 0.5), "nogc-med-us")
	b.Logf("pacer cycles %d; allocator %v", g.gpu.GCCycles(), al.Stats())
}
