package sim

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/gocu-dev/gocu/kernel"
)

// Output of kernel.Printf (and of fmt.Printf in kernels translated by
// gocu gen, whose twins call kernel.Printf): every thread's text is kept
// until the launch ends, then written ordered by block (linear index) and
// by thread within the block, each line prefixed with both, so that the
// output does not depend on the schedule.

// maxPrint is the most text a launch keeps, as a GPU's printf buffer
// holds 1 MiB by default (cudaLimitPrintfFifoSize).
const maxPrint = 1 << 20

// printed is the text one thread printed in one call.
type printed struct {
	block uint64 // linear block index
	rank  int32
	bidx  kernel.Dim3
	tidx  kernel.Dim3
	text  string
}

// printState is a launch's printed text.
type printState struct {
	bytes     atomic.Int64
	truncated atomic.Bool
	out       []printed // merged from the workers at their end, under launch.mu
}

var _ kernel.Printer = (*thread)(nil)

// Print implements kernel.Printer.
func (th *thread) Print(_ *kernel.Thread, text string) {
	l := th.b.l
	if l.print.bytes.Add(int64(len(text))) > maxPrint {
		l.print.truncated.Store(true)
		return
	}
	w := th.b.w
	w.prints = append(w.prints, printed{block: th.b.idx, rank: th.rank, bidx: th.BlockIdx, tidx: th.ThreadIdx, text: text})
}

// collectPrints hands a worker's printed text to the launch.
func (l *launch) collectPrints(w *worker) {
	if len(w.prints) == 0 {
		return
	}
	l.mu.Lock()
	l.print.out = append(l.print.out, w.prints...)
	l.mu.Unlock()
	w.prints = nil
}

// flushPrints writes the launch's printed text, in block and thread
// order.
func (l *launch) flushPrints() {
	ps := l.print.out
	if len(ps) == 0 && !l.print.truncated.Load() {
		return
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].block != ps[j].block {
			return ps[i].block < ps[j].block
		}
		return ps[i].rank < ps[j].rank
	})
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		var text strings.Builder
		for ; j < len(ps) && ps[j].block == ps[i].block && ps[j].rank == ps[i].rank; j++ {
			text.WriteString(ps[j].text)
		}
		b.WriteString(kernel.PrefixLines(ps[i].bidx, ps[i].tidx, text.String()))
		i = j
	}
	if l.print.truncated.Load() {
		fmt.Fprintf(&b, "sim: kernel %s: printed more than %d bytes; the rest was dropped, as a GPU drops what does not fit its printf buffer\n", l.name, maxPrint)
	}
	w := l.stdout
	if w == nil {
		w = os.Stdout
	}
	io.WriteString(w, b.String())
	l.print.out = nil
}
