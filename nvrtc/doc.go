// Package nvrtc compiles CUDA C++ at run time with NVIDIA's NVRTC library,
// loaded through purego (no cgo, no toolkit needed to build), and caches the
// results on disk.
//
// # Compiling
//
// Compile turns source into a CUBIN for one exact GPU (Arch "sm_90", what
// gocu uses: the GPU that is present, never a fixed list) or into PTX
// (Arch "compute_90"). Options carry headers (include name → source),
// macros, the language dialect, include paths, the usual code-generation
// switches, and name expressions: "axpy<float>" is reported in
// Result.Lowered with its mangled name, the one to look a template kernel up
// by. NVRTC needs no GPU, only the library. TargetFor picks the Arch for a
// compute capability: the CUBIN target when this NVRTC knows the GPU, PTX
// for the newest architecture below it otherwise.
//
// Unlike NVRTC's default, the directory of the source is not searched for
// #include "..." files (--no-source-include), since they would escape the
// cache key: pass headers in Options.Headers or Options.IncludePaths, or set
// Options.SearchSourceDir.
//
// A program NVRTC rejects gives a *CompileError. Each of its Diagnostics has
// the file, line, column (when NVRTC printed a caret), severity, message and
// the text of the offending line, and its Error method prints them like a
// compiler:
//
//	nvrtc: compiling kernel.cu for sm_90 failed: 1 error
//	kernel.cu:4:16: error: identifier "undefined_thing" is undefined
//	 4 |         x[i] = undefined_thing * 2.0f;
//	   |                ^
//
// Warnings of a successful compilation are in Result.Log and
// Result.Diagnostics. Other failures are *Error values carrying the NVRTC
// function and its Code; a Code is an error itself, so
// errors.Is(err, nvrtc.InvalidOption) works.
//
// # The library
//
// libnvrtc (CUDA 12 or 13) is loaded on first use. GOCU_NVRTC_LIB names a
// file to use instead of searching; otherwise the dynamic loader is asked
// for libnvrtc.so.13, .so.12 and .so, then the toolkit directories
// (/usr/local/cuda/..., /usr/local/cuda-1[23]*/...) and the pip wheels
// (site-packages/nvidia/cu13/lib, nvidia/cuda_nvrtc/lib) of the active
// virtualenv or conda environment, /opt/*/.venv and ~/.local. When nothing
// loads, the error (errors.Is(err, ErrNotFound)) lists every place tried.
//
// # The disk cache
//
// A Cache compiles through a Compiler (NVRTC, or a fake in tests) and keeps
// every result in a directory: $GOCU_CACHE_DIR, else the gocu folder of
// os.UserCacheDir, created 0700; a directory open to others is made
// private, one owned by another user is refused. GOCU_CACHE=off disables it.
//
//   - The key is a SHA-256 of every input: source, header names and texts,
//     all options (arch, dialect, macros, include paths and the size and
//     modification time of every file under them, flags, extra options),
//     name expressions, CUBIN or PTX, the compiler's version and library
//     file (path, size, modification time), the caller's driver version and
//     the entry format version. Include directories given through
//     Options.Extra are not covered: use IncludePaths.
//   - An entry is written to a temporary file in the same directory and
//     renamed into place: readers never see half an entry, and processes
//     compiling the same kernel at once all succeed.
//   - Every read is verified: magic, format version, the stored key against
//     the requested one, the length, and a SHA-256 of everything after the
//     header (code, log and lowered names). An entry that fails is logged
//     (log/slog, debug level), recompiled and overwritten, never used.
//   - A failed compilation is never stored.
//
// A warm load (hash the inputs, read and verify the file) takes tens of
// microseconds for a typical CUBIN. Cache.Info and Cache.Clear serve
// "gocu cache info|clear".
package nvrtc
