// Package gen is gocu gen: it translates Go kernels to CUDA C++.
//
// A kernel is a Go function marked //gocu:kernel whose first parameter is a
// *kernel.Thread (see package kernel). Put
//
//	//go:generate go tool gocu-gen
//
// in the package and run go generate ("gocu gen ./..." does the same from
// the command line for any package patterns; problems are printed as
// file:line:col and the exit status is 1). For every package with kernels gen writes
// zz_gocu_<pkg>.go beside it, holding
//
//   - one typed launcher per kernel (see Launchers below), the API a
//     program calls;
//   - the CUDA C++ source of all the package's kernels and of every Go
//     function they reach (in the same package or another, transitively),
//     and its SHA-256;
//   - a meta.Module describing each kernel (parameters, resource use) and
//     the site table of Go source positions, registered with meta.Register
//     so that launchers and the simulator find kernels by their function;
//   - the checked twin of each kernel and of each function it calls: a Go
//     copy in which every slice and array element access goes through
//     kernel.At (and every outer index of a multi-dimensional array through
//     kernel.Index), and every loop body starts with kernel.Loop (where the
//     simulator stops a launch that ran out of time), for the simulator's
//     checked mode. Each of its statements carries a line directive
//     (/*line broken.go:72*/) naming the kernel's source line, so that what
//     the simulator reads from the call stack (a barrier, a warp operation,
//     a panic) is reported there too, not in the generated file.
//
// Output is deterministic and gofmt-clean; files whose contents did not
// change are not rewritten; the generated file of a package whose kernels
// are gone is removed.
//
// Every problem of the packages is reported in one run, sorted by
// position, each as file:line:col: <construct> is not supported in a
// kernel: <what instead> (at most MaxDiagnostics, then a count of the
// rest): the translation goes on past a rejected function, leaving it
// out and not reporting its calls again. A function with a type error is
// reported by the type checker's message and not translated. A pattern
// that names no package, or a run outside a Go module, is one line; a
// package without kernels is said to have none.
//
// # The Go subset
//
// Types: bool, every sized int and uint, int and uint (64-bit), float32,
// float64, named types of them, slices of them (not of slices), fixed-size
// arrays (any number of dimensions), named structs of all these, and the
// kernel package's Dim3, Float2, Float4, Int4, Uint4 and Uchar4 (not as
// struct fields: CUDA aligns them more strictly than Go); the low-precision
// kernel.Half, BFloat16, FP8E4M3 and FP8E5M2 (package lowp's types, their
// bit patterns in C: arithmetic, ordering, bit operators, op=, ++ and --
// and numeric conversions are rejected, since Go would apply them to the
// bits, and the message says what to write: x.Float32() and
// kernel.ToHalf and its kin, or uint16(x) for the bits), Half2, BFloat16x2,
// Half8 and BFloat16x8, and the fragments FragA, FragB, FragC, FragATF32
// and FragBTF32 (register arrays). Constants, typed
// and untyped, including iota.
//
// Generic kernels and device functions (see Generics below); methods with
// value receivers and with pointer receivers on struct and array types,
// called on a variable, an element or a shared tile (Go's implicit & and *
// become C's); package-level arrays initialised with constants, read as
// constant tables (see Constant tables below).
//
// Statements: var and := declarations, assignment (parallel assignment
// has Go's meaning: a, b = b, a swaps), op-assignment, ++ and --, if/else
// with init, every for form (including for i := range n and ranges over
// slices and arrays with index and value), switch with and without a tag,
// labelled break and continue, return (several results, named results),
// calls. //gocu:unroll [N] on the line before a for emits #pragma unroll.
//
// Expressions: arithmetic, comparison, logical and bitwise operators
// including &^, conversions, len, min, max, struct and array literals,
// slicing s[lo:hi]; the kernel package (thread position, SyncThreads and
// its variants, SyncWarp, ThreadFence, shuffles and votes, atomics on
// &s[i] or &sharedArray[i], float32 math, Shared, DynamicShared,
// Reinterpret, the half conversions, MMABF16, MMAF16, MMATF32, the
// LdMatrix forms and CpAsync with its commit and wait, the warpgroup MMAs
// (WGMMABF16 and its kin, which make the module need sm_90a:
// meta.Module.ArchSpecific), the named barriers BarSync and BarArrive,
// SetMaxNReg (sm_90a), the memory barriers (MBarInit and its kin, on
// &sharedArray[i]) and CpAsyncBulk (sm_90), FastExp2, as inline PTX in a
// prelude that only units using them get: see tensor.go); package lowp's
// conversions and methods; Go's math package for float64; math/bits (OnesCount,
// LeadingZeros, TrailingZeros, Len, Reverse, RotateLeft); fmt.Printf,
// fmt.Println, fmt.Print and kernel.Printf (see Printing below).
//
// Not supported, each with its own message: maps, interfaces, closures,
// go, defer, select, channels, goto, fallthrough, allocation (make, new,
// append, slice literals), strings other than constant print arguments,
// recursion, pointers other than &s[i] passed to an atomic, &acc passed
// to a warpgroup MMA or WGWait, a shared array passed to a function, or a
// pointer receiver, panic, print and println, method values, generic
// types, calls to packages other than kernel, math, math/bits and fmt's
// print functions, package-level variables other than constant tables,
// and a statement that makes two calls with side effects whose order C++
// does not fix.
//
// # Generics
//
// A generic kernel is compiled once per instance:
//
//	//gocu:kernel
//	func Axpy[T kernel.Float](t *kernel.Thread, a T, x, y []T)
//
// becomes the entry points Axpy_float32 and Axpy_float64, named
// Axpy[float32] and Axpy[float64] in the metadata and in errors. The
// instances are every combination of the types the constraints allow
// (kernel.Float, kernel.Integer, kernel.Number, or a union of number
// types such as interface{ ~int32 | ~float32 }, told apart by their
// underlying types), at most 16; a constraint that allows other types
// (any, comparable, methods) needs the instances named:
//
//	//gocu:instantiate Scale[float32, int32] Scale[float64, int64]
//
// The launcher is generic too, with the kernel's type parameters and
// constraints:
//
//	func LaunchAxpy[T kernel.Float](d *gocu.Device, cfg gocu.Config, a T, x, y *gocu.Buffer[T]) error
//
// so that a call reads like a call of the kernel and type arguments are
// inferred (kernels.LaunchAxpy(d, cfg, float32(2), x, y)). On a GPU it
// picks the instance by the underlying types of its type arguments (a
// named type such as type Celsius float32 runs the float32 instance); on
// the simulator it runs the kernel itself, instantiated by Go.
//
// This is why instances come from the constraints and not from the call
// sites of the launchers: the launcher's constraint is the kernel's, so
// every call the Go compiler accepts has its compiled instance, however
// many packages call it, including ones gocu gen never loads; and the
// call sites of a launcher cannot be type-checked before gocu gen has
// written it. A //gocu:instantiate directive narrows the set; a launch
// with a type outside it returns an error that names the instances.
//
// Generic device functions need nothing: each instance a kernel's
// instance calls (directly or through other functions, in any package) is
// translated, as fma_float32 and fma_float64.
//
// # Constant tables
//
// A package-level array variable that kernel code reads becomes a
// __constant__ array with the values of its declaration, which the
// threads of a warp read through the constant cache (the lecture's
// convolution pattern):
//
//	var mask = [5]float32{0.0625, 0.25, 0.375, 0.25, 0.0625}
//
// Kernels index it, range over it, take its length and copy it. Its
// declaration must initialise it with a composite literal of constants,
// and no code of the loaded packages may write it, slice it or take its
// address (the GPU's copy would differ from the Go variable the simulator
// reads); kernels writing it are rejected at the write. All tables of a
// module share the 64 KiB of constant memory.
//
// # Printing
//
// fmt.Printf, fmt.Println, fmt.Print and kernel.Printf become CUDA's
// printf. The format must be a constant; its verbs are translated for the
// arguments' types (%d of an int64 is %lld, of a uint32 %u; floats are
// passed as doubles; %t and %v of a bool print true or false; %x of a
// negative signed value prints a minus sign and the magnitude, as Go
// does); arguments are numbers, bools and constant strings. Verbs that C
// cannot print as Go does (%b, %q, %U, %T, %p, %#x, argument indexes, *
// widths, a width on %x of a signed value) are rejected. %v and %g of a
// float without a precision print C's six significant digits, not Go's
// shortest exact decimal. On the simulator the twins print through
// kernel.Printf, which orders the output by block and thread and prefixes
// each line with both (meta.Kernel.Prints makes the launchers and sim.Run
// use the twin for kernels that call fmt); the GPU prints in no order, at
// the next synchronisation.
//
// # Go's meaning on the GPU
//
// The translation keeps Go's semantics, not C's:
//
//   - float32 stays float32: constants are printed exactly in their type
//     (0.1 becomes 0.1f, the shortest decimal that reads back as the same
//     float32); nothing is promoted to double.
//   - int and uint are 64-bit (long long); int32 arithmetic stays 32-bit.
//   - Signed +, -, * and << wrap: they are computed in the unsigned type of
//     the same width (C++ leaves signed overflow undefined, and NVRTC has no
//     -fwrapv). int8, int16, uint8 and uint16 results are truncated to
//     their width after C's promotion to int.
//   - Division and remainder truncate; MinInt / -1 == MinInt and
//     MinInt % -1 == 0. Go panics on a zero divisor; the debug build records
//     "integer divide by zero", the release build defines x/0 == 0 and
//     x%0 == x. A constant divisor other than -1 compiles to C's / and %.
//   - Shifts by at least the width give 0 (or -1 for a negative signed
//     value shifted right); a negative count is an error in the debug build
//     and counts as huge in the release build.
//   - Float to integer conversion truncates; out-of-range values and NaN
//     give what Go on amd64 gives (the "integer indefinite" value, through
//     int32 for narrower types and through int64 for uint32, and Go's
//     two-step sequence for uint64).
//   - Go's min and max propagate NaN and order -0 before +0; kernel.Min
//     and kernel.Max (fminf, fmaxf) ignore a NaN operand.
//   - Go allows fusing x*y+z into an FMA, and so does NVRTC's default
//     --fmad=true; an explicit conversion float32(x*y) forbids it in Go and
//     becomes __fmul_rn(x, y). Compile with --fmad=false for results
//     bit-identical to Go on amd64 (which never fuses). Never compile with
//     --use_fast_math: it changes division, sqrt and denormals.
//
// # Launchers
//
// The launcher of kernel K is LaunchK for an exported kernel and launchK
// for an unexported one (gray: launchGray), so that it is exported exactly
// when the kernel is (LauncherName). It takes the device, a gocu.Config and
// the kernel's parameters after the *kernel.Thread, each slice []T as a
// gocu.Slice[T] (a *gocu.Buffer[T], or an *array.Array of dtype T, whose
// element type is checked at the launch) and every other parameter with
// the kernel's own type:
//
//	//gocu:kernel
//	func Gray(t *kernel.Thread, rgb, gray []uint8, n int32)
//
//	// written by gocu gen:
//	func LaunchGray(d *gocu.Device, cfg gocu.Config, rgb, gray gocu.Slice[uint8], n int32) error
//
//	err := kernels.LaunchGray(d, gocu.Auto(n), rgb, gray, int32(n))
//
// so that wrong argument types are compile errors, for buffers (a generic
// kernel's launcher is generic and takes a slice of a type parameter's
// type as a *gocu.Buffer, from which the type argument is inferred: see
// Generics). gen reports a package
// identifier that takes a launcher's name (or gocuProgram, or any gocu*
// name it writes) instead of shadowing it.
//
// On a GPU the launcher compiles the package's CUDA source with NVRTC for
// that GPU on first use (through the disk cache), keeps the loaded module
// per device, and launches with the parameter convention below: a buffer
// (or a view of one) travels as its own device pointer and length. The
// launch allocates nothing and returns without waiting. On the simulator it
// runs the Go kernel itself through sim.Launch, on the buffers' memory,
// with the checked twin for gocu.Config.Checked or GOCU_SIM_CHECKED.
// gocu.Config.N (gocu.Auto) asks for a 1-D launch of N threads with the
// occupancy calculator's block size (256 on the simulator, or the
// kernel's //gocu:launch_bounds when smaller); Config.Stream orders the
// launch on a stream; gocu.In, Out and InOut buffers copy host slices
// around one launch. Config.Debug (or GOCU_DEBUG=1) runs the debug build on
// a GPU: see Debug mode. GOCU_FMAD=0 compiles without multiply-add
// contraction, for float results bit-identical to the simulator's.
//
// # Kernels in CUDA, and how to launch them
//
// Each kernel becomes extern "C" __global__ void Name(...), so that
// cuModuleGetFunction finds it by its Go name (meta.Kernel.Entry). The
// parameters after the *kernel.Thread become, in order:
//
//   - a scalar (bool, integers, floats, named types of them): one argument
//     of its C type and Go size (bool 1 byte, int and uint 8 bytes);
//   - a slice: two arguments, the element pointer (T*, the device address
//     of element 0) and the length in elements (long long);
//   - a struct or an array: one argument holding the Go value's bytes
//     (the C struct has Go's size, alignment and field offsets, checked by
//     static_assert; an array is gocu_array<T, N>, a struct wrapping T[N]).
//
// Arguments travel as void** to cuLaunchKernel, one pointer per C argument.
// meta.Param records Kind, CType, Size, Align and ElemSize for each.
// //gocu:noalias makes slice pointers __restrict__ (the caller must not
// pass overlapping slices); //gocu:launch_bounds N [M] adds
// __launch_bounds__(N, M). Static shared memory is declared in the kernel;
// meta.Kernel.SharedBytes is its size. A kernel calling kernel.DynamicShared
// needs the dynamic shared-memory size at launch.
//
// The source needs nothing beyond what NVRTC provides implicitly; compile
// it as C++17 for the GPU present (--gpu-architecture=sm_XX).
//
// # Debug mode
//
// Compiled with -DGOCU_DEBUG, the source checks every slice index, every
// array index that is not constant, slice bounds, division by zero, shift
// counts and Reinterpret's length and alignment. The first failing thread
// records the error in the module-global buffer gocu_err (layout: package
// meta, ErrorWords) with the site id that indexes meta.Module.Sites (the
// same sites the checked twins report), the index, the length, the address
// of the indexed slice, the block and the thread; the kernel goes on with
// a harmless substitute element, so it neither faults (which would lose
// the context) nor hangs at a barrier. The release build has no checks.
//
// A debug launch (gocu.Config.Debug or GOCU_DEBUG=1) clears the buffer
// with the kernel gocu_err_take of the debug build, launches, reads the
// buffer back with it and waits, and returns a recorded failure as the
// *sim.Error the simulator's checked mode reports for the same fault: for
// an index out of range the very same message (kernel, block, thread,
// index, length, which argument's memory, and the Go file:line:col and
// expression), without the simulator's schedule seed. Debug launches of
// one module take turns, since the buffer is the module's.
//
// # Tests without a GPU
//
// The package's tests compile every generated source to PTX with Debian's
// clang-16 (with a small prelude standing in for the CUDA headers, in
// testdata/clang), run barrier-free kernels as host C++ and compare them
// bit for bit with Go, run random expressions through both (package
// difftest), and run the checked twins against the kernels and CPU
// references on a small executor. Where NVRTC is found (it needs no GPU)
// every golden source is compiled with it too. The GPU tests
// (TestGPUKernels, TestGPULangLaunchers, TestGPUPrintf,
// TestGPUDebugOutOfRange, TestDifferentialGPU) run where a GPU and NVRTC
// are; the differential one uses cases translated ahead of time
// (testdata/diffgpu.json.gz) where there is no go command.
package gen
