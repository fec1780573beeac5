package frame

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// wideData is db-benchmark-like data on dev: id1 of 100 keys, id3 of n/100,
// id3w the same groups as id3 spread over a wide range (the hash path),
// id1l id1 as int64 from 2^33,
// v1, v2 ints and v3 floats with some nulls; and a right frame of the
// distinct id3w keys (a foreign key) for joins.
func wideData(t *testing.T, dev *gocu.Device, n int) (x, right *Frame) {
	t.Helper()
	r := rand.New(rand.NewPCG(9, 10))
	g := max(n/100, 1)
	id1, id3, v1, v2 := make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	id3w, id1l, v3 := make([]int64, n), make([]int64, n), make([]float64, n)
	valid := make([]bool, n)
	wide := func(k int32) int64 { return int64(k)*1_000_000_007 - 1<<40 }
	for i := range n {
		id1[i] = int32(1 + r.IntN(100))
		id3[i] = int32(1 + r.IntN(g))
		id3w[i] = wide(id3[i])
		id1l[i] = int64(id1[i]) + 1<<33 // int64 keys of small range, read in place
		v1[i], v2[i] = int32(1+r.IntN(5)), int32(1+r.IntN(15))
		v3[i] = math.Round(r.Float64()*100*1e6) / 1e6
		valid[i] = r.IntN(50) != 0
	}
	col := func(name string, v any, valid []bool) *Series {
		s, err := NewSeriesValid(dev, name, v, valid)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	x, err := New(dev, col("id1", id1, nil), col("id3", id3, nil), col("id3w", id3w, nil), col("id1l", id1l, nil), col("v1", v1, nil),
		col("v2", v2, nil), col("v3", v3, valid))
	if err != nil {
		t.Fatal(err)
	}
	rk, rw := make([]int64, 0, g), make([]float64, 0, g)
	for k := int32(1); k <= int32(g); k++ {
		if k%7 != 3 { // some keys without a right row
			rk, rw = append(rk, wide(k)), append(rw, r.Float64())
		}
	}
	if right, err = New(dev, col("id3w", rk, nil), col("w", rw, nil)); err != nil {
		t.Fatal(err)
	}
	return x, right
}

// TestGPUHashMatchesCPU runs the db-benchmark's group-by queries (few
// groups in shared memory, many with global atomics, wide keys through the
// hash table) and joins on a wide key on GPU 0, with the hash paths on and
// off, and compares them with the CPU's results (floats to 1e-9: atomic
// sums vary in the last bits).
func TestGPUHashMatchesCPU(t *testing.T) {
	gpu, err := gpuDev()
	gputest.Need(t, err)
	hashQueries(t, gpu, 600_000, "", "0")
}

// TestGPUHashKernelsCompile compiles the hash and group kernels with NVRTC
// for every value and key dtype (the group reductions fall back to global atomics
// quietly when they do not compile).
func TestGPUHashKernelsCompile(t *testing.T) {
	gpu, err := gpuDev()
	gputest.Need(t, err)
	for _, dt := range []array.DType{array.Int32, array.Int64, array.Float32, array.Float64} {
		for _, key := range []array.DType{array.Int32, array.Int64} {
			if _, err := hashModule(gpu, dt, key); err != nil {
				t.Errorf("values %v, keys %v: %v", dt, key, err)
			}
		}
	}
}

// TestHashQueriesCPU is TestGPUHashMatchesCPU on the CPU, with the Go
// table as the CPU uses it and forced, against the sort-based paths.
func TestHashQueriesCPU(t *testing.T) {
	hashQueries(t, gocu.MustOpen("cpu"), 40_000, "", "1")
}

// hashQueries compares the queries' results on dev, under each of the
// GOCU_FRAME_HASH modes, with the CPU's default ones, on n rows.
func hashQueries(t *testing.T, dev *gocu.Device, n int, modes ...string) {
	cpu := gocu.MustOpen("cpu")
	xc, rc := wideData(t, cpu, n)
	xg, rg := wideData(t, dev, n)
	queries := map[string]func(x, r *Frame) (*Frame, error){
		"q1": func(x, _ *Frame) (*Frame, error) { return x.GroupBy("id1").Agg(Sum("v1")) },
		"q1l": func(x, _ *Frame) (*Frame, error) {
			return x.GroupBy("id1l").Agg(Sum("v3"), Min("v1").Named("a"), Max("v3").Named("b"), Mean("v2").Named("c"))
		},
		"q2":  func(x, _ *Frame) (*Frame, error) { return x.GroupBy("id1", "id3").Agg(Sum("v1")) },
		"q3":  func(x, _ *Frame) (*Frame, error) { return x.GroupBy("id3").Agg(Sum("v1"), Mean("v3")) },
		"q3w": func(x, _ *Frame) (*Frame, error) { return x.GroupBy("id3w").Agg(Sum("v1"), Mean("v3")) },
		"q7": func(x, _ *Frame) (*Frame, error) {
			return x.GroupBy("id3").Agg(Max("v1").Named("a"), Min("v2").Named("b"), Max("v3").Named("c"), Min("v3").Named("d"))
		},
		"all": func(x, _ *Frame) (*Frame, error) {
			return x.GroupBy("id1").Agg(Sum("v3"), Count("v3").Named("c"), Min("v3").Named("mn"), Max("v3").Named("mx"),
				Std("v3").Named("sd"), Var("v1").Named("va"), First("v3").Named("f"), Last("v1").Named("l"), Median("v3").Named("md"))
		},
		"wide2": func(x, _ *Frame) (*Frame, error) {
			return x.GroupBy("id3w", "id1").Agg(Sum("v3"), Max("v2"))
		},
		"inner": func(x, r *Frame) (*Frame, error) { return x.Join(r, Inner, "id3w") },
		"left":  func(x, r *Frame) (*Frame, error) { return x.Join(r, Left, "id3w") },
		"semi":  func(x, r *Frame) (*Frame, error) { return x.Join(r, Semi, "id3w") },
		"anti":  func(x, r *Frame) (*Frame, error) { return x.Join(r, Anti, "id3w") },
		"outer": func(x, r *Frame) (*Frame, error) { return x.Join(r, Outer, "id3w") },
	}
	for name, q := range queries {
		t.Setenv("GOCU_FRAME_HASH", "0")
		want, err := q(xc, rc)
		if err != nil {
			t.Fatalf("%s on the CPU: %v", name, err)
		}
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%s/hash%q", name, mode), func(t *testing.T) {
				t.Setenv("GOCU_FRAME_HASH", mode)
				got, err := q(xg, rg)
				if err != nil {
					t.Fatalf("on %v: %v", dev, err)
				}
				sameValues(t, got, want)
			})
		}
	}
}

// TestGPUHashTable fills a table on GPU 0 with int64 and int32 keys of
// many repeats and looks up present and absent ones (and the empty key).
func TestGPUHashTable(t *testing.T) {
	gpu, err := gpuDev()
	gputest.Need(t, err)
	testTable(t, gpu)
}

// TestHashTableCPU is TestGPUHashTable with the CPU's Go table.
func TestHashTableCPU(t *testing.T) { testTable(t, gocu.MustOpen("cpu")) }

func testTable(t *testing.T, gpu *gocu.Device) {
	r := rand.New(rand.NewPCG(12, 13))
	const n, distinct = 200_000, 5_000
	pool := make([]int64, distinct)
	for i := range pool {
		pool[i] = int64(int32(r.Uint32())/3) * 3
	}
	keys, probe := make([]int64, n), make([]int64, n)
	in := map[int64]bool{}
	for i := range keys {
		keys[i] = pool[r.IntN(distinct)]
		in[keys[i]] = true
		probe[i] = int64(int32(r.Uint32()))
		if i%2 == 0 {
			probe[i] = keys[r.IntN(i+1)]
		}
	}
	empty := int64(1) // not a multiple of 3
	probe[7] = empty
	for _, dt := range []array.DType{array.Int64, array.Int32} {
		ka := array.FromSliceOn(gpu, keys).AsType(dt)
		tb, slot, err := newTable(ka, n, empty)
		if err != nil {
			t.Fatal(err)
		}
		found, err := tb.find(array.FromSliceOn(gpu, probe).AsType(dt))
		if err != nil {
			t.Fatal(err)
		}
		slots, err1 := tb.slots.Int64s()
		sl, err2 := slot.Int64s()
		fd, err3 := found.Int64s()
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		used := 0
		for _, s := range slots {
			if s != empty {
				used++
			}
		}
		if used != len(in) {
			t.Errorf("%v: %d slots used for %d keys", dt, used, len(in))
		}
		for i, k := range keys {
			if slots[sl[i]] != k {
				t.Fatalf("%v: key %d at slot %d, which holds %d", dt, k, sl[i], slots[sl[i]])
			}
		}
		for i, k := range probe {
			if in[k] != (fd[i] >= 0) || (fd[i] >= 0 && slots[fd[i]] != k) {
				t.Fatalf("%v: find(%d) = %d (present %v)", dt, k, fd[i], in[k])
			}
		}
		rank, d, err := tb.ranks()
		if err != nil || d != len(in) {
			t.Fatalf("%v: ranks: %d keys, %v", dt, d, err)
		}
		rk, err := rank.Int64s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			j := r.IntN(n)
			if (keys[i] < keys[j]) != (rk[sl[i]] < rk[sl[j]]) {
				t.Fatalf("%v: ranks of %d and %d are %d and %d", dt, keys[i], keys[j], rk[sl[i]], rk[sl[j]])
			}
		}
	}
}
