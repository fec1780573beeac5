package sim_test

import (
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func add(t *kernel.Thread, a, b, c []float32, n int32) {
	i := t.Index()
	if i < n {
		c[i] = a[i] + b[i]
	}
}

func blockSum(t *kernel.Thread, x, out []float32) {
	s := kernel.Shared[[256]float32](t)
	tid := t.ThreadIdx.X
	s[tid] = x[t.Index()]
	t.SyncThreads()
	for st := t.BlockDim.X / 2; st > 0; st /= 2 {
		if tid < st {
			s[tid] += s[tid+st]
		}
		t.SyncThreads()
	}
	if tid == 0 {
		out[t.BlockIdx.X] = s[0]
	}
}

func TestSmoke(t *testing.T) {
	n := int32(1000)
	a, b, c := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), float32(2*i)
	}
	err := sim.Run(sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}}, add, a, b, c, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c {
		if c[i] != float32(3*i) {
			t.Fatalf("c[%d]=%v", i, c[i])
		}
	}
	x := make([]float32, 1024)
	for i := range x {
		x[i] = float32(i % 7)
	}
	out := make([]float32, 4)
	err = sim.Launch(sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}}, sim.Kernel{Name: "blockSum", Func: func(t *kernel.Thread) { blockSum(t, x, out) }})
	if err != nil {
		t.Fatal(err)
	}
	for bi := range 4 {
		var want float32
		for i := bi * 256; i < bi*256+256; i++ {
			want += x[i]
		}
		if out[bi] != want {
			t.Fatalf("out[%d]=%v want %v", bi, out[bi], want)
		}
	}
	err = sim.Run(sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}}, add, a, b, c, n+1)
	t.Log(err)
}
