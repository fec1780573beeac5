package frame

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// The benchmarks mirror ../shared/anchors/baseline_frame.py: the
// db-benchmark's generated data (id1, id2 of 100 keys, id3 of N/100, id4
// the string of id1, v1 in 1..5, v2 in 1..15, v3 uniform in [0, 100)) and
// its queries. FRAME_BENCH_ROWS sets N (10,000,000 by default). Each runs
// on the CPU and, where one is present, on the GPU (sub-benchmarks cpu and
// cuda); the GPU ones wait for the device before the clock stops.

func benchRows() int {
	if s := os.Getenv("FRAME_BENCH_ROWS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 10_000_000
}

type benchData struct {
	x, small, big *Frame
}

var benchCache sync.Map // device -> *benchData

// dbData generates the db-benchmark frame and the join's right frames.
func dbData(b *testing.B, dev *gocu.Device) *benchData {
	if d, ok := benchCache.Load(dev); ok {
		return d.(*benchData)
	}
	n, k := benchRows(), 100
	r := rand.New(rand.NewPCG(1, 2))
	id1, id2, id3 := make([]int32, n), make([]int32, n), make([]int32, n)
	v1, v2, v3 := make([]int32, n), make([]int32, n), make([]float64, n)
	id4 := make([]string, n)
	names := make([]string, k+1)
	for i := range names {
		names[i] = "id" + strconv.Itoa(i)
	}
	for i := 0; i < n; i++ {
		id1[i] = int32(1 + r.IntN(k))
		id2[i] = int32(1 + r.IntN(k))
		id3[i] = int32(1 + r.IntN(max(n/k, 1)))
		v1[i] = int32(1 + r.IntN(5))
		v2[i] = int32(1 + r.IntN(15))
		v3[i] = math.Round(r.Float64()*100*1e6) / 1e6
		id4[i] = names[id1[i]]
	}
	col := func(name string, v any) *Series {
		s, err := NewSeries(dev, name, v)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	x, err := New(dev, col("id1", id1), col("id2", id2), col("id3", id3), col("id4", id4), col("v1", v1), col("v2", v2), col("v3", v3))
	if err != nil {
		b.Fatal(err)
	}
	sk, sw := make([]int32, k), make([]float64, k)
	for i := range sk {
		sk[i], sw[i] = int32(i+1), r.Float64()
	}
	nb := max(n/k, 1)
	bk, bw := make([]int32, nb), make([]float64, nb)
	for i := range bk {
		bk[i], bw[i] = int32(i+1), r.Float64()
	}
	small, err := New(dev, col("id1", sk), col("w", sw))
	if err != nil {
		b.Fatal(err)
	}
	big, err := New(dev, col("id3", bk), col("w", bw))
	if err != nil {
		b.Fatal(err)
	}
	d := &benchData{x: x, small: small, big: big}
	benchCache.Store(dev, d)
	return d
}

// finish evaluates every column of f and waits for the device.
func finish(b *testing.B, dev *gocu.Device, f *Frame, err error) {
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Eval(); err != nil {
		b.Fatal(err)
	}
	if err := dev.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

var gpuDev = sync.OnceValues(func() (*gocu.Device, error) {
	if err := gocu.GPUUsable(); err != nil {
		return nil, err
	}
	return gocu.Open("cuda:0")
})

// onDevices runs fn as sub-benchmarks on the CPU and on GPU 0.
func onDevices(b *testing.B, fn func(b *testing.B, dev *gocu.Device, d *benchData)) {
	b.Run("cpu", func(b *testing.B) {
		dev := gocu.MustOpen("cpu")
		d := dbData(b, dev)
		b.ResetTimer()
		fn(b, dev, d)
	})
	b.Run("cuda", func(b *testing.B) {
		dev, err := gpuDev()
		gputest.Need(b, err)
		d := dbData(b, dev)
		b.ResetTimer()
		fn(b, dev, d)
	})
}

func benchGroupBy(b *testing.B, keys []string, aggs ...Agg) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		for b.Loop() {
			g, err := d.x.GroupBy(keys...).Agg(aggs...)
			finish(b, dev, g, err)
		}
	})
}

// BenchmarkGroupByQ1 is q1: sum v1 by id1 (100 groups).
func BenchmarkGroupByQ1(b *testing.B) { benchGroupBy(b, []string{"id1"}, Sum("v1")) }

// BenchmarkGroupByQ2 is q2: sum v1 by id1 and id2 (10,000 groups).
func BenchmarkGroupByQ2(b *testing.B) { benchGroupBy(b, []string{"id1", "id2"}, Sum("v1")) }

// BenchmarkGroupByQ3 is q3: sum v1 and mean v3 by id3 (N/100 groups).
func BenchmarkGroupByQ3(b *testing.B) { benchGroupBy(b, []string{"id3"}, Sum("v1"), Mean("v3")) }

// BenchmarkGroupByQ5 is q5: sums of v1, v2, v3 by the string key id4.
func BenchmarkGroupByQ5(b *testing.B) {
	benchGroupBy(b, []string{"id4"}, Sum("v1"), Sum("v2"), Sum("v3"))
}

// BenchmarkGroupByQ5Encode is q5 with the string column's dictionary
// encoding (on the host) redone every time; BenchmarkGroupByQ5 reuses the
// encoding, which a column keeps once made.
func BenchmarkGroupByQ5Encode(b *testing.B) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		for b.Loop() {
			id4, err := d.x.Column("id4")
			if err != nil {
				b.Fatal(err)
			}
			fresh := *id4
			fresh.codes = &codesCache{}
			x, err := d.x.WithColumn(&fresh)
			if err != nil {
				b.Fatal(err)
			}
			g, err := x.GroupBy("id4").Agg(Sum("v1"), Sum("v2"), Sum("v3"))
			finish(b, dev, g, err)
		}
	})
}

// BenchmarkGroupByQ7 is q7: max v1 and min v2 by id3.
func BenchmarkGroupByQ7(b *testing.B) {
	benchGroupBy(b, []string{"id3"}, Max("v1").Named("a"), Min("v2").Named("b"))
}

// BenchmarkGroupByStd is the std of v3 by id2.
func BenchmarkGroupByStd(b *testing.B) { benchGroupBy(b, []string{"id2"}, Std("v3")) }

func benchJoin(b *testing.B, right func(*benchData) *Frame, how How, key string) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		for b.Loop() {
			j, err := d.x.Join(right(d), how, key)
			finish(b, dev, j, err)
		}
	})
}

// BenchmarkJoinSmallInner joins on id1 with a 100-row right frame.
func BenchmarkJoinSmallInner(b *testing.B) {
	benchJoin(b, func(d *benchData) *Frame { return d.small }, Inner, "id1")
}

// BenchmarkJoinBigInner joins on id3 with an N/100-row right frame.
func BenchmarkJoinBigInner(b *testing.B) {
	benchJoin(b, func(d *benchData) *Frame { return d.big }, Inner, "id3")
}

// BenchmarkJoinBigLeft is BenchmarkJoinBigInner as a left join.
func BenchmarkJoinBigLeft(b *testing.B) {
	benchJoin(b, func(d *benchData) *Frame { return d.big }, Left, "id3")
}

func benchSort(b *testing.B, keys ...SortKey) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		x, err := d.x.Drop("id4") // pandas' sort moves the string column too; see the report
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			s, err := x.Sort(keys...)
			finish(b, dev, s, err)
		}
	})
}

// BenchmarkSortV3 sorts by the float column v3.
func BenchmarkSortV3(b *testing.B) { benchSort(b, Asc("v3")) }

// BenchmarkSortID1ID3 sorts by id1, then id3.
func BenchmarkSortID1ID3(b *testing.B) { benchSort(b, Asc("id1"), Asc("id3")) }

// BenchmarkFilter keeps the rows with v3 > 50.
func BenchmarkFilter(b *testing.B) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		for b.Loop() {
			f, err := d.x.Filter(Col("v3").Gt(50))
			finish(b, dev, f, err)
		}
	})
}

// BenchmarkParquetGroupBy reads the frame from a Parquet file (written
// once, Snappy) and runs q1 on it: from the disk to a group-by result.
func BenchmarkParquetGroupBy(b *testing.B) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		path := filepath.Join(b.TempDir(), "x.parquet")
		fh, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.x.WriteParquet(fh); err != nil {
			b.Fatal(err)
		}
		if err := fh.Close(); err != nil {
			b.Fatal(err)
		}
		if st, err := os.Stat(path); err == nil {
			b.ReportMetric(float64(st.Size())/1e6, "file-MB")
		}
		b.ResetTimer()
		for b.Loop() {
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			x, err := ReadParquet(dev, fh)
			fh.Close()
			if err != nil {
				b.Fatal(err)
			}
			g, err := x.GroupBy("id1").Agg(Sum("v1"))
			finish(b, dev, g, err)
		}
	})
}

// BenchmarkReadCSV reads the frame without id4 from a CSV file (written
// once), as baseline_frame.py's read_csv figures.
func BenchmarkReadCSV(b *testing.B) {
	onDevices(b, func(b *testing.B, dev *gocu.Device, d *benchData) {
		x, err := d.x.Drop("id4")
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), "x.csv")
		fh, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := x.WriteCSV(fh); err != nil {
			b.Fatal(err)
		}
		if err := fh.Close(); err != nil {
			b.Fatal(err)
		}
		if st, err := os.Stat(path); err == nil {
			b.ReportMetric(float64(st.Size())/1e6, "file-MB")
		}
		b.ResetTimer()
		for b.Loop() {
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			y, err := ReadCSV(dev, bufio.NewReaderSize(fh, 1<<20), nil)
			fh.Close()
			finish(b, dev, y, err)
		}
	})
}
