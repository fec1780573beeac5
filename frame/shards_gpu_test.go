package frame

// Shards on every GPU of the host through NCCL, and the benchmark of 1
// against k devices. The tests skip without 2 GPUs and NCCL:
//
//	go test ./frame -run TestGPUShards -v
//	GOCU_FRAME_DIST_ROWS=2e8 go test ./frame -run '^$' -bench 'Shards/./cuda' -benchtime 3x
//
// (NCCL_NVLS_ENABLE=0 on the lent machines.)

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/internal/multigpu"
)

// allGPUs returns every GPU as a gocu device, or skips.
func allGPUs(t testing.TB) []*gocu.Device { return multigpu.Devices(t) }

// Group-by and join across every GPU give the CPU's one-device results.
func TestGPUShards(t *testing.T) {
	devs := allGPUs(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	c, err := dist.New(devs...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f, r := joinInputs(t, 8, 20000, 3000)
	s, err := Scatter(c, f)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Scatter(c, r)
	if err != nil {
		t.Fatal(err)
	}
	aggs := []Agg{Sum("v1").Named("a"), Sum("v3").Named("b"), Count("v2").Named("c"), Mean("v2").Named("d"),
		Min("v2").Named("e"), Max("s").Named("g"), Var("v2").Named("h"), Std("v3").Named("i"), First("v2").Named("j"),
		Last("s").Named("k")}
	for _, keys := range [][]string{{"id1"}, {"id2"}, {"id1", "id2"}, {"fk"}} {
		for _, as := range [][]Agg{aggs, {NUnique("v1"), Median("v2")}} {
			want, err := f.GroupBy(keys...).Agg(as...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.GroupBy(keys...).Agg(as...)
			what := fmt.Sprintf("%d GPUs, keys %v, %d aggs", len(devs), keys, len(as))
			matchFrame(t, what, toCPU(t, sortBy(t, gather(t, got, err), keys...)), sortBy(t, want, keys...), 1e-6)
		}
	}
	for _, on := range [][]string{{"id2"}, {"id1", "id3"}} {
		for _, how := range []How{Inner, Left, Outer, Semi, Anti} {
			want, err := f.Join(r, how, on...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Join(rs, how, on...)
			order := []string{"lid"}
			if how != Semi && how != Anti {
				order = append(order, "rid")
			}
			what := fmt.Sprintf("%d GPUs, %s join on %v", len(devs), how, on)
			matchFrame(t, what, toCPU(t, sortBy(t, gather(t, got, err), order...)), sortBy(t, want, order...), 0)
		}
	}
}

func toCPU(t *testing.T, f *Frame) *Frame {
	t.Helper()
	g, err := frameTo("test", f, hostCPU)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// benchRowsDist is GOCU_FRAME_DIST_ROWS, the rows of the benchmarks of
// Shards (default 10^6).
func benchRowsDist(b *testing.B) int {
	n := 1_000_000
	if v := os.Getenv("GOCU_FRAME_DIST_ROWS"); v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 1 {
			b.Fatalf("GOCU_FRAME_DIST_ROWS=%q: want a number of rows", v)
		}
		n = int(x)
	}
	return n
}

// distBench is db-benchmark's table x of n rows on the host (int keys
// of 100 and n/100 values, int and float values) and its big join
// partner y, n/100 rows with one row per id3.
type distBench struct{ x, y *Frame }

var distBenchCache sync.Map // rows -> *distBench

func distBenchData(b *testing.B, n int) *distBench {
	if d, ok := distBenchCache.Load(n); ok {
		return d.(*distBench)
	}
	m := array.On(hostCPU)
	rng := m.NewRNG(11)
	k := max(n/100, 1)
	ints := func(hi, n int) *array.Array {
		return rng.Uniform(array.Float64, 0, float64(hi), n).Floor().AsType(array.Int32).Add(int32(1)).Copy()
	}
	col := func(name string, a *array.Array) *Series {
		s, err := FromArray(name, a, nil)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	x, err := New(hostCPU, col("id1", ints(100, n)), col("id3", ints(k, n)), col("v1", ints(5, n)),
		col("v3", rng.Uniform(array.Float64, 0, 100, n).Copy()))
	if err != nil {
		b.Fatal(err)
	}
	y, err := New(hostCPU, col("id3", m.Arange(array.Int32, 1, float64(k+1))), col("w", rng.Uniform(array.Float64, 0, 1, k).Copy()))
	if err != nil {
		b.Fatal(err)
	}
	d := &distBench{x: x, y: y}
	distBenchCache.Store(n, d)
	return d
}

// finishAll evaluates every rank's frame and waits for the devices.
func finishAll(b *testing.B, s *Shards, err error) {
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range s.parts {
		finish(b, f.dev, f, nil)
	}
}

// onRanks runs the query as sub-benchmarks: on one device as a Frame
// (cpu-1, cuda-1), and as Shards on 2 CPU ranks (cpu-2) and on 2 to all
// GPUs (cuda-k). A first run, untimed, compiles the kernels.
func onRanks(b *testing.B, one func(d *distBench) (*Frame, error), many func(x, y *Shards) (*Shards, error)) {
	n := benchRowsDist(b)
	b.Run("cpu-1", func(b *testing.B) {
		d := distBenchData(b, n)
		f, err := one(d) // a first run outside the timing, as in the others
		finish(b, hostCPU, f, err)
		b.ResetTimer()
		for b.Loop() {
			f, err := one(d)
			finish(b, hostCPU, f, err)
		}
	})
	shards := func(b *testing.B, c *dist.Comm) {
		d := distBenchData(b, n)
		x, err := Scatter(c, d.x)
		if err != nil {
			b.Fatal(err)
		}
		y, err := Scatter(c, d.y)
		if err != nil {
			b.Fatal(err)
		}
		finishAll(b, x, nil)
		finishAll(b, y, nil)
		s, err := many(x, y) // compiles the hash kernels on every device
		finishAll(b, s, err)
		b.ResetTimer()
		for b.Loop() {
			s, err := many(x, y)
			finishAll(b, s, err)
		}
	}
	b.Run("cpu-2", func(b *testing.B) {
		c, err := dist.New(hostCPU, hostCPU)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		shards(b, c)
	})
	b.Run("cuda-1", func(b *testing.B) {
		devs := allGPUs(b)
		d := distBenchData(b, n)
		x, err := frameTo("bench", d.x, devs[0])
		if err != nil {
			b.Fatal(err)
		}
		y, err := frameTo("bench", d.y, devs[0])
		if err != nil {
			b.Fatal(err)
		}
		g := &distBench{x: x, y: y}
		finish(b, devs[0], x, nil)
		finish(b, devs[0], y, nil)
		f, err := one(g) // compiles the hash kernels
		finish(b, devs[0], f, err)
		b.ResetTimer()
		for b.Loop() {
			f, err := one(g)
			finish(b, devs[0], f, err)
		}
	})
	for k := 2; k <= 8; k++ {
		b.Run(fmt.Sprintf("cuda-%d", k), func(b *testing.B) {
			devs := allGPUs(b)
			if len(devs) < k {
				b.Skipf("%d GPUs: needs %d", len(devs), k)
			}
			c, err := dist.New(devs[:k]...)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			shards(b, c)
		})
	}
}

// BenchmarkShardsGroupBy is db-benchmark's q1 (sum of v1 by id1, 100
// groups) and q3 (sum of v1 and mean of v3 by id3, n/100 groups) on one
// device and split across ranks.
func BenchmarkShardsGroupBy(b *testing.B) {
	b.Run("q1", func(b *testing.B) {
		onRanks(b, func(d *distBench) (*Frame, error) {
			return d.x.GroupBy("id1").Agg(Sum("v1"))
		}, func(x, _ *Shards) (*Shards, error) {
			return x.GroupBy("id1").Agg(Sum("v1"))
		})
	})
	b.Run("q3", func(b *testing.B) {
		onRanks(b, func(d *distBench) (*Frame, error) {
			return d.x.GroupBy("id3").Agg(Sum("v1"), Mean("v3"))
		}, func(x, _ *Shards) (*Shards, error) {
			return x.GroupBy("id3").Agg(Sum("v1"), Mean("v3"))
		})
	})
}

// BenchmarkShardsJoin is db-benchmark's big inner join: x with y (n/100
// rows) on id3, on one device and split across ranks.
func BenchmarkShardsJoin(b *testing.B) {
	b.Run("inner", func(b *testing.B) {
		onRanks(b, func(d *distBench) (*Frame, error) {
			return d.x.Join(d.y, Inner, "id3")
		}, func(x, y *Shards) (*Shards, error) {
			return x.Join(y, Inner, "id3")
		})
	})
}
