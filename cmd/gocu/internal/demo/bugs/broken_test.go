package bugs_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo/bugs"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func TestAddOffByOne(t *testing.T) {
	r := newRand(t)
	const n = 1000 // not a multiple of the block: thread n exists
	a, b := randFloats(r, n), randFloats(r, n)
	c := nanFilled(n)
	line := wantLines(t, "broken.go", "out of range")[0]
	for _, seed := range []uint64{1, 2, 0xdeadbeef} {
		cfg := sim.Config{Grid: kernel.Dim3{X: cdiv(n, 256)}, Block: kernel.Dim3{X: 256}, Seed: seed}
		err := sim.Run(cfg, bugs.AddOffByOne, a, b, c, int32(n))
		e := asSimError(t, err)
		if e.Kind != sim.KindOutOfRange || !errors.Is(err, sim.ErrOutOfRange) {
			t.Fatalf("want an out-of-range error, got %v", err)
		}
		if e.Kernel != "AddOffByOne" || e.Seed != seed {
			t.Errorf("kernel %q seed %d, want AddOffByOne and %d", e.Kernel, e.Seed, seed)
		}
		if e.Block != (kernel.Dim3{X: n / 256}) || e.Thread != (kernel.Dim3{X: n % 256}) {
			t.Errorf("block %v thread %v, want the thread of global index %d", e.Block, e.Thread, n)
		}
		if e.Index != n || e.Length != n {
			t.Errorf("index %d length %d, want %d and %d", e.Index, e.Length, n, n)
		}
		if filepath.Base(e.Pos.File) != "broken.go" || e.Pos.Line != line || !strings.HasSuffix(e.Pos.Func, "bugs.AddOffByOne") {
			t.Errorf("position %v in %s, want broken.go:%d in AddOffByOne", e.Pos, e.Pos.Func, line)
		}
		msg := err.Error()
		for _, s := range []string{"AddOffByOne", "block (3,0,0) thread (232,0,0)", "index 1000 out of range [0:1000]", "broken.go:"} {
			if !strings.Contains(msg, s) {
				t.Errorf("message %q lacks %q", msg, s)
			}
		}
	}

	// Checked mode names the memory and the exact access.
	cfg := sim.Config{Grid: kernel.Dim3{X: cdiv(n, 256)}, Block: kernel.Dim3{X: 256}, Checked: true}
	k := sim.Kernel{Name: "AddOffByOne", Args: []any{a, b, c, int32(n)},
		Func:    func(t *kernel.Thread) { bugs.AddOffByOne(t, a, b, c, n) },
		Checked: func(t *kernel.Thread) { addOffByOneChecked(t, a, b, c, n) }}
	e := asSimError(t, sim.Launch(cfg, k))
	if e.Kind != sim.KindOutOfRange || e.Index != n || e.Length != n || e.Thread != (kernel.Dim3{X: n % 256}) {
		t.Fatalf("checked: got %v", e)
	}
	col := sites("broken.go", "AddOffByOne", [2]string{"c[i] = a[i] + b[i]", "a[i]"})[0].Col
	if e.Pos.Line != line || e.Pos.Expr != "a[i]" || e.Pos.Col != int(col) || e.Memory != "global memory (argument 1)" {
		t.Errorf("checked: position %v memory %q, want broken.go:%d:%d (a[i]) in argument 1", e.Pos, e.Memory, line, col)
	}
}

func TestTiledMatMulNoSync(t *testing.T) {
	r := newRand(t)
	const m, n, k = 48, 40, 64
	a, b := randFloats(r, m*k), randFloats(r, k*n)
	readLine := wantLines(t, "broken.go", "race read")[0]
	writeLines := wantLines(t, "broken.go", "race write")
	for _, seed := range []uint64{1, 7, 12345} {
		c := nanFilled(m * n)
		cfg := sim.Config{Grid: dim(cdiv(n, Tile), cdiv(m, Tile)), Block: dim(Tile, Tile), Seed: seed, Checked: true}
		kern := sim.Kernel{Name: "TiledMatMulNoSync", Args: []any{a, b, c, int32(m), int32(n), int32(k)},
			Func:    func(t *kernel.Thread) { bugs.TiledMatMulNoSync(t, a, b, c, m, n, k) },
			Checked: func(t *kernel.Thread) { tiledMatMulNoSyncChecked(t, a, b, c, m, n, k) }}
		err := sim.Launch(cfg, kern)
		e := asSimError(t, err)
		if e.Kind != sim.KindSharedRace || !errors.Is(err, sim.ErrRace) || e.Kernel != "TiledMatMulNoSync" || e.Seed != seed {
			t.Fatalf("want a shared-memory race in TiledMatMulNoSync, got %v", err)
		}
		o := e.Other
		if o == nil || o.Block != e.Block || o.Thread == e.Thread {
			t.Fatalf("the race must name a second thread of the same block: %v", err)
		}
		// One side reads the tile in the product loop, the other writes it
		// with the next phase's load, on the lines marked in broken.go.
		read, write := e.Pos, o.Pos
		if e.Op == "write" {
			read, write = o.Pos, e.Pos
		}
		if ops := e.Op + "/" + o.Op; ops != "read/write" && ops != "write/read" {
			t.Errorf("operations %s, want a read and a write", ops)
		}
		if read.Line != readLine || !contains(writeLines, write.Line) || filepath.Base(read.File) != "broken.go" {
			t.Errorf("read at %v and write at %v, want broken.go:%d and one of %v", read, write, readLine, writeLines)
		}
		if !strings.HasPrefix(e.Memory, "shared [16][16]float32 #") || e.Index < 0 || e.Index >= Tile*Tile {
			t.Errorf("memory %q element %d", e.Memory, e.Index)
		}
		// The conflicting element is the writer's own, tile[ty][tx].
		wt := e.Thread
		if o.Op == "write" {
			wt = o.Thread
		}
		if e.Index != int(wt.Y*Tile+wt.X) || e.Msg != fmt.Sprintf("[%d][%d]", wt.Y, wt.X) {
			t.Errorf("writer %v wrote element %d %s", wt, e.Index, e.Msg)
		}
	}

	// Without the twin the simulator cannot see the race; the default
	// mode runs it to completion.
	c := nanFilled(m * n)
	if err := sim.Run(sim.Config{Grid: dim(cdiv(n, Tile), cdiv(m, Tile)), Block: dim(Tile, Tile)}, bugs.TiledMatMulNoSync, a, b, c, int32(m), int32(n), int32(k)); err != nil {
		t.Fatal(err)
	}
}

func TestBlockSumDivergent(t *testing.T) {
	r := newRand(t)
	const n = 1000
	x := randFloats(r, n)
	partial := nanFilled(4)
	barrier := wantLines(t, "broken.go", "divergent barrier")[0]
	last := wantLines(t, "broken.go", "last barrier")[0]
	for _, seed := range []uint64{3, 99, 1 << 40} {
		cfg := sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}, Seed: seed}
		err := sim.Run(cfg, bugs.BlockSumDivergent, x, partial, int32(n))
		e := asSimError(t, err)
		if e.Kind != sim.KindDivergentBarrier || !errors.Is(err, sim.ErrDivergentBarrier) || e.Kernel != "BlockSumDivergent" {
			t.Fatalf("want a divergent barrier, got %v", err)
		}
		// Threads 0-127 wait at the barrier in the branch; 128-255 return.
		// The report names the first of each, whatever the schedule.
		if e.Thread != (kernel.Dim3{}) || e.Pos.Line != barrier || e.Op != "SyncThreads" || e.Block.X < 0 || e.Block.X >= 4 {
			t.Errorf("waiting thread %v at %v (%s) in block %v, want thread (0,0,0) at broken.go:%d", e.Thread, e.Pos, e.Op, e.Block, barrier)
		}
		o := e.Other
		if o == nil || o.Op != "returned" || o.Thread != (kernel.Dim3{X: 128}) || o.Block != e.Block || o.Pos.Line != last {
			t.Fatalf("other side %+v, want thread (128,0,0) returned, last synchronised at broken.go:%d", o, last)
		}
		if msg := err.Error(); !strings.Contains(msg, "returned from the kernel") || !strings.Contains(msg, "last synchronised at broken.go:") {
			t.Errorf("message %q", msg)
		}
	}
}
