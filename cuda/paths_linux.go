//go:build linux

package cuda

// libraryPaths are the places libcuda.so.1 is looked for, in order: the
// dynamic loader's own search (ld.so.cache, LD_LIBRARY_PATH), then the
// directories distributions, containers (the NVIDIA container toolkit
// mounts /usr/local/nvidia), WSL and NixOS put the driver in, then the CUDA
// toolkit's forward-compatibility copy. The toolkit's stubs directory is
// never searched: its libcuda only returns CUDA_ERROR_STUB_LIBRARY.
var libraryPaths = []string{
	"libcuda.so.1",
	"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
	"/usr/lib/aarch64-linux-gnu/libcuda.so.1",
	"/usr/lib64/libcuda.so.1",
	"/usr/lib/libcuda.so.1",
	"/lib/x86_64-linux-gnu/libcuda.so.1",
	"/usr/local/nvidia/lib64/libcuda.so.1",
	"/usr/local/nvidia/lib/libcuda.so.1",
	"/usr/lib/wsl/lib/libcuda.so.1",
	"/run/opengl-driver/lib/libcuda.so.1",
	"/usr/local/cuda/compat/libcuda.so.1",
	"/usr/local/cuda/lib64/libcuda.so.1",
	"libcuda.so",
}
