// Package prof is gocu's profiler: it records every kernel launch, graph
// replay, copy and memset queued through package cuda, timed on the GPU
// with CUDA events, and every launch on the simulator (package sim), timed
// by the wall clock. It summarises them in a table like PyTorch's
// key_averages (calls, total, mean, min, max and share of the total per
// kernel) and writes a Chrome-trace JSON file that opens in Perfetto
// (https://ui.perfetto.dev) or chrome://tracing.
//
//	prof.Start()
//	... launch kernels, copy ...
//	p, err := prof.Stop()
//	fmt.Print(p.Table())
//	p.WriteFile("trace.json")
//
// # Without changing the program
//
// GOCU_PROFILE=out.json profiles any program that links this package. It is
// opt-in, like net/http/pprof: a program links it with
//
//	import _ "github.com/gocu-dev/gocu/prof"
//
// (or by calling Start), and the gocu command links it. No other package of
// gocu imports it, so programs that do not ask for it carry no profiler.
// Profiling starts when the package is initialised,
// before main, so the first launch is recorded. The trace file is written
// while the program runs: every 100 ms the finished operations are appended
// and the file is left a complete, valid trace. Go has no exit hooks, so
// the operations of the last 100 ms before the program exits reach the file
// only if the program calls Flush (or Stop) before it returns:
//
//	func main() {
//		defer prof.Flush() // completes $GOCU_PROFILE, if set; does nothing otherwise
//		...
//	}
//
// The gocu command calls Flush itself. "gocu prof FILE" prints the summary
// table of a trace file.
//
// # How operations are timed
//
// For an operation on a CUDA stream the profiler records an event on that
// stream just before the operation and another just after it, and reads
// their times later: when Stop, Flush or Snapshot collects the profile, and
// every 100 ms from a background goroutine that only asks the driver
// whether events have completed (cuEventQuery) and never waits. Profiling
// therefore adds no synchronisation to the program; it adds two event
// records (a few microseconds of driver time) to every operation. The
// events are pooled and reused once read. GPU timestamps are placed on the
// profile's clock through an anchor event recorded on an idle stream of the
// profiler's own, renewed every second, so that GPU and host events line up
// in the trace to within a few microseconds.
//
// Work queued on a stream that is capturing a CUDA graph does not run when
// it is queued; it is listed with no duration (the graph's replays are
// timed as "graph" operations). A launch the driver refuses is listed with
// no duration either.
//
// Only work queued through package cuda and package sim is seen: kernels
// that other libraries launch by themselves (cuBLAS inside Sgemm) are not
// recorded; bracket such calls with CUDA events to time them.
//
// When profiling is off, package cuda and package sim pay one atomic load
// per operation and allocate nothing.
//
// # Memory history
//
// RecordMemoryHistory records every allocation and free of the GPUs'
// caching allocators, and every driver allocation they make or release,
// with its size, stream, time, the memory in use and reserved after it,
// and the Go stack, like torch.cuda.memory._record_memory_history.
// StopMemoryHistory and MemorySnapshot return it; WriteTrace writes it as
// a Chrome trace with a counter track of the memory in use and reserved
// per device and an instant event carrying the stack per allocation and
// free. GOCU_MEMORY_HISTORY=mem.json records a whole program that links
// this package, the file written as GOCU_PROFILE's is (every 100 ms, and
// completed by Flush). "gocu prof memory mem.json -o timeline.png" prints
// each device's peaks and the call sites holding the most memory at the
// peak of memory in use (Peaks, WriteSummary), and draws the memory over
// time. Recording costs each allocation and free a stack capture; when
// it is off, one atomic load.
package prof
