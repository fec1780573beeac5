package kernel

import (
	"fmt"
	"os"
	"strings"
)

// Printf formats its arguments as fmt.Printf does and writes the text as
// output of the thread t: the printf of CUDA C, for debugging.
//
//	if i == 0 {
//		kernel.Printf(t, "block %d: sum %.3f\n", t.BlockIdx.X, sum)
//	}
//
// fmt.Printf, fmt.Println and fmt.Print in kernel code mean the same (gocu
// gen turns them into Printf). The arguments are numbers, bools and
// constant strings; the format a constant.
//
// On the GPU it becomes CUDA's printf: the text of every thread reaches
// standard output when the program next waits for the GPU, in no
// particular order, and what does not fit the device's printf buffer
// (1 MiB by default) is lost. gocu gen translates the format to C's:
// %d of an int64 is %lld, a float32 is passed as a double, a bool prints
// as true or false; it rejects the verbs C's printf cannot print as Go
// does (%b, %q, %U, %T, %p, argument indexes, * widths). Floats printed
// with %v or a %g without precision show C's six significant digits where
// Go shows the shortest exact decimal, and infinities and NaN print as
// inf and nan.
//
// On the simulator the text of each thread is kept until the launch ends
// and then written to standard output ordered by block (in the order of
// their linear index) and by thread within the block, each line prefixed
// with its block and thread:
//
//	block (0,0,0) thread (3,0,0): block 0: sum 1.250
//
// Called with a thread that has no executor (the kernel called as plain
// Go) it writes at once, with the same prefix.
func Printf(t *Thread, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if p, ok := t.ex.(Printer); ok {
		p.Print(t, text)
		return
	}
	os.Stdout.WriteString(PrefixLines(t.BlockIdx, t.ThreadIdx, text))
}

// Printer is the part of an executor that collects the output of Printf.
// Package sim implements it; with an executor without it Printf writes to
// standard output at once.
type Printer interface {
	// Print records text as output of thread t.
	Print(t *Thread, text string)
}

// PrefixLines prefixes every line of text with the block and thread that
// printed it, as the simulator shows a thread's output; a last line
// without a newline gets one.
func PrefixLines(block, thread Dim3, text string) string {
	if text == "" {
		return ""
	}
	prefix := fmt.Sprintf("block (%d,%d,%d) thread (%d,%d,%d): ", block.X, block.Y, block.Z, thread.X, thread.Y, thread.Z)
	var b strings.Builder
	for line := range strings.Lines(text) {
		b.WriteString(prefix)
		b.WriteString(line)
	}
	if !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}
