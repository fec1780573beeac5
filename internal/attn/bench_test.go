package attn

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/kernel"
)

// BenchmarkGPU times the kernels at the peers' shape, B=4 H=16 S=4096,
// D=128 and 64, causal and full: the forward pass, the backward pass and
// both, as the median of CUDA-event times, in TFLOP/s counted as
// FlashAttention counts them (forward 4·B·H·S²·D, halved when causal;
// backward 2.5 times the forward). The peer is torch's default attention
// (cuDNN) in ../shared/anchors/train_gpt.py, run in the same device call:
//
//	go test -c ./internal/attn && ./attn.test -test.run '^$' -test.bench GPU
func BenchmarkGPU(b *testing.B) {
	for _, dim := range []int{128, 64} {
		for _, causal := range []bool{true, false} {
			mask := "full"
			if causal {
				mask = "causal"
			}
			for _, pass := range []string{"fwd", "bwd", "fwdbwd"} {
				b.Run(fmt.Sprintf("d%d/%s/%s", dim, mask, pass), func(b *testing.B) {
					benchAttn(b, shape{4, 16, 4096, dim}, causal, pass, false)
				})
			}
		}
	}
}

// BenchmarkGPUWG times fwd128WG and fwd128WS, the forward passes on the
// warpgroup MMA, beside fwd128 at the peers' shape, B=4 H=16 S=4096
// D=128, causal and full, in TFLOP/s as BenchmarkGPU counts them (it
// needs sm_90a); then the backward pass and both, on mma.sync and on the
// warpgroup MMA (suffix wg, WGMMAEnv set: bwdKVWG and bwdQWG after
// fwd128WG; suffix wga, WGMMAAtomicEnv also set: bwdAllWG, dq by atomics):
//
//	go test -c ./internal/attn && ./attn.test -test.run '^$' -test.bench GPUWG
func BenchmarkGPUWG(b *testing.B) {
	for _, causal := range []bool{true, false} {
		mask := "full"
		if causal {
			mask = "causal"
		}
		for _, pass := range []string{"fwd", "fwdwg", "fwdws", "bwd", "bwdwg", "bwdwga", "fwdbwd", "fwdbwdwg", "fwdbwdwga"} {
			b.Run(fmt.Sprintf("d128/%s/%s", mask, pass), func(b *testing.B) {
				benchAttn(b, shape{4, 16, 4096, 128}, causal, pass, false)
			})
		}
	}
}

// BenchmarkGPUStrided times the kernels at GPT-2's shape, B=8 H=12
// S=1024 D=64 causal, on contiguous (B, H, S, D) operands and on
// (B, S, H, D) ones read through strides, as GPT's heads are:
//
//	./attn.test -test.run '^$' -test.bench GPUStrided
func BenchmarkGPUStrided(b *testing.B) {
	for _, bshd := range []bool{false, true} {
		for _, pass := range []string{"fwd", "bwd"} {
			b.Run(fmt.Sprintf("bshd=%v/%s", bshd, pass), func(b *testing.B) {
				benchAttn(b, shape{8, 12, 1024, 64}, true, pass, bshd)
			})
		}
	}
}

// benchAttn times pass on s; bshd lays every operand out as (B, S, H, D).
func benchAttn(b *testing.B, s shape, causal bool, pass string, bshd bool) {
	d := needGPU(b)
	n, rows := s.size(), s.bh()*s.Seq
	in := benchInputs(b, n)
	q, k, v, do := upload(b, d, in[0]), upload(b, d, in[1]), upload(b, d, in[2]), upload(b, d, in[3])
	o, lse := poisoned(b, d, n, nanBF16), poisoned(b, d, rows, nanF32)
	dq, dk, dv := poisoned(b, d, n, nanBF16), poisoned(b, d, n, nanBF16), poisoned(b, d, n, nanBF16)
	dvec := poisoned(b, d, rows, nanF32)
	scale := float32(1 / math.Sqrt(float64(s.Dim)))
	l := s.contiguous()
	if bshd {
		l = layout{int32(s.Seq * s.Heads * s.Dim), int32(s.Dim), int32(s.Heads * s.Dim)}
	}
	fwd := func() error {
		return forwardStrided(d, q, k, v, o, lse, [4]layout{l, l, l, l}, s, scale, causal, false)
	}
	bwd := func() error {
		return backwardStrided(d, q, k, v, o, lse, do, dvec, dq, dk, dv, [8]layout{l, l, l, l, l, l, l, l}, s, scale, causal, false)
	}
	switch pass { // both passes on the warpgroup MMA
	case "bwdwg", "fwdbwdwg", "bwdwga", "fwdbwdwga":
		if !hasWGMMA(d) {
			b.Skip("bwdKVWG needs sm_90a (compute capability 9.0)")
		}
		b.Setenv(WGMMAEnv, "1")
		if strings.HasSuffix(pass, "a") {
			b.Setenv(WGMMAAtomicEnv, "1")
		}
		pass = strings.TrimSuffix(strings.TrimSuffix(pass, "a"), "wg")
	}
	if pass != "fwdwg" && pass != "fwdws" { // o stays poisoned until the timed kernel writes it
		must(b, fwd())
	}
	flop := 4 * float64(s.bh()) * float64(s.Seq) * float64(s.Seq) * float64(s.Dim)
	if causal {
		flop /= 2
	}
	f := fwd
	switch pass {
	case "fwdwg":
		if !hasWGMMA(d) {
			b.Skip("fwd128WG needs sm_90a (compute capability 9.0)")
		}
		f = func() error {
			return forwardWG(d, q, k, v, o, lse, [4]layout{l, l, l, l}, s, scale, causal, false)
		}
	case "fwdws":
		if !hasWGMMA(d) {
			b.Skip("fwd128WS needs sm_90a (compute capability 9.0)")
		}
		f = func() error {
			return forwardWS(d, q, k, v, o, lse, [4]layout{l, l, l, l}, s, scale, causal, false)
		}
	case "bwd":
		f, flop = bwd, 2.5*flop
	case "fwdbwd":
		f = func() error {
			if err := fwd(); err != nil {
				return err
			}
			return bwd()
		}
		flop *= 3.5
	}
	t := newGPUTimer(b, d).median(b, f)
	b.ReportMetric(float64(t.Nanoseconds())/1e3, "us-median")
	b.ReportMetric(flop/t.Seconds()/1e12, "TFLOP/s")
	// A result the kernels did not finish would show as poison; the
	// forward pass alone writes o but not dq.
	last, what := dq, "dq"
	if pass == "fwd" || pass == "fwdwg" || pass == "fwdws" {
		last, what = o, "o"
	}
	if x := download(b, last)[n-1]; x == nanBF16 {
		b.Fatalf("%s was not written", what)
	}
}

var inputs = map[int][4][]kernel.BFloat16{}

// benchInputs returns four random inputs of n elements, made once per n:
// the testing package calls a benchmark several times.
func benchInputs(b *testing.B, n int) [4][]kernel.BFloat16 {
	in, ok := inputs[n]
	if !ok {
		r := newRand(b)
		in = [4][]kernel.BFloat16{randBF16s(r, n), randBF16s(r, n), randBF16s(r, n), randBF16s(r, n)}
		inputs[n] = in
	}
	return in
}

// gpuTimer times GPU work with a pair of events on the device's default
// stream, where launches that name no stream go.
type gpuTimer struct {
	start, end *cuda.Event
	s          *cuda.Stream
}

func newGPUTimer(b testing.TB, d *gocu.Device) *gpuTimer {
	b.Helper()
	s, err := d.CUDA().NewEvent(cuda.EventDefault)
	must(b, err)
	e, err := d.CUDA().NewEvent(cuda.EventDefault)
	must(b, err)
	b.Cleanup(func() { s.Close(); e.Close() })
	return &gpuTimer{s, e, d.Stream().CUDA()}
}

// median runs f three times untimed, then max(b.N, 10) times timed, and
// returns the median GPU time.
func (g *gpuTimer) median(b *testing.B, f func() error) time.Duration {
	b.Helper()
	for range 3 {
		must(b, f())
	}
	var ts []time.Duration
	b.ResetTimer()
	for range max(b.N, 10) {
		must(b, g.start.Record(g.s))
		must(b, f())
		must(b, g.end.Record(g.s))
		must(b, g.end.Synchronize())
		el, err := cuda.Elapsed(g.start, g.end)
		must(b, err)
		ts = append(ts, el)
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}
