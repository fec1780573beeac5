package cuda

import "strconv"

// Result is a CUresult: the status code every driver API function returns.
type Result int32

// resultInfo describes one CUresult code of cuda.h.
type resultInfo struct {
	code   Result
	name   string // the enumerator in cuda.h
	msg    string // what the driver says (cuGetErrorString wording where known)
	sticky bool   // the context is unusable afterwards; the process must restart
}

// results lists every CUresult enumerator of cuda.h (CUDA 13.x), in header
// order. It names errors when the driver cannot (it is not loaded, or it is
// older than the code). The sticky flags follow cuda.h: those errors "leave
// the process in an inconsistent state and any further CUDA work will return
// the same error".
var results = [...]resultInfo{
	{0, "CUDA_SUCCESS", "no error", false},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument", false},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", false},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error: the driver is not initialized (cuInit failed or was not called)", false},
	{4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down", false},
	{5, "CUDA_ERROR_PROFILER_DISABLED", "profiler disabled while using external profiling tool", false},
	{6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", "profiler not initialized: call cudaProfilerInitialize()", false},
	{7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", "profiler already started", false},
	{8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", "profiler already stopped", false},
	{34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library, not the real driver", false},
	{36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "the call requires a newer CUDA driver", false},
	{46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable", false},
	{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", false},
	{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal", false},
	{102, "CUDA_ERROR_DEVICE_NOT_LICENSED", "device doesn't have valid Grid license", false},
	{200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid", false},
	{201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context", false},
	{202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current", false},
	{205, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed", false},
	{206, "CUDA_ERROR_UNMAP_FAILED", "unmapping of buffer object failed", false},
	{207, "CUDA_ERROR_ARRAY_IS_MAPPED", "array is mapped", false},
	{208, "CUDA_ERROR_ALREADY_MAPPED", "resource already mapped", false},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device", false},
	{210, "CUDA_ERROR_ALREADY_ACQUIRED", "resource already acquired", false},
	{211, "CUDA_ERROR_NOT_MAPPED", "resource not mapped", false},
	{212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "resource not mapped as array", false},
	{213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", "resource not mapped as pointer", false},
	{214, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered", true},
	{215, "CUDA_ERROR_UNSUPPORTED_LIMIT", "limit is not supported on this architecture", false},
	{216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "exclusive-thread device already in use by a different thread", false},
	{217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices", false},
	{218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed", false},
	{219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "invalid OpenGL or DirectX context", false},
	{220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", "uncorrectable NVLink error detected during the execution", true},
	{221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found", false},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain", false},
	{223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation was disabled", false},
	{224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "the provided execution affinity is not supported", false},
	{225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "the code to be compiled contains an unsupported call to cudaDeviceSynchronize", false},
	{226, "CUDA_ERROR_CONTAINED", "an exception occurred on the device that is now contained by the GPU's error containment capability", true},
	{300, "CUDA_ERROR_INVALID_SOURCE", "device kernel source is invalid", false},
	{301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found", false},
	{302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "shared object symbol not found", false},
	{303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "shared object initialization failed", false},
	{304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS", false},
	{400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle", false},
	{401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state", false},
	{402, "CUDA_ERROR_LOSSY_QUERY", "attempted introspection would be semantically lossy", false},
	{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found", false},
	{600, "CUDA_ERROR_NOT_READY", "device not ready", false},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered", true},
	{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch", false},
	{702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated", true},
	{703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "launch uses incompatible texturing mode", false},
	{704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled", false},
	{705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled", false},
	{708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", "cannot set while device is active in this process", false},
	{709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed", false},
	{710, "CUDA_ERROR_ASSERT", "device-side assert triggered", true},
	{711, "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted", false},
	{712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped", false},
	{713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region", false},
	{714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error", true},
	{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered", true},
	{716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address", true},
	{717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "operation not supported on global/shared address space", true},
	{718, "CUDA_ERROR_INVALID_PC", "invalid program counter", true},
	{719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure", true},
	{720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch", false},
	{721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", "tensor memory not completely freed", true},
	{800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted", false},
	{801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported", false},
	{802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized", false},
	{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination", false},
	{804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW", false},
	{805, "CUDA_ERROR_MPS_CONNECTION_FAILED", "MPS client failed to connect to the MPS control daemon or the MPS server", false},
	{806, "CUDA_ERROR_MPS_RPC_FAILURE", "the remote procedural call between the MPS server and the MPS client failed", false},
	{807, "CUDA_ERROR_MPS_SERVER_NOT_READY", "MPS server is not ready to accept new MPS client requests", false},
	{808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", "the hardware resources required to create MPS client have been exhausted", false},
	{809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", "the hardware resources required to support device connections have been exhausted", false},
	{810, "CUDA_ERROR_MPS_CLIENT_TERMINATED", "the MPS client has been terminated by the server", true},
	{811, "CUDA_ERROR_CDP_NOT_SUPPORTED", "module is using CUDA Dynamic Parallelism, but the current configuration does not support it", false},
	{812, "CUDA_ERROR_CDP_VERSION_MISMATCH", "attempted use of CDP features across incompatible CUDA Dynamic Parallelism versions", false},
	{900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing", false},
	{901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture", false},
	{902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "operation would result in a merge of separate capture sequences", false},
	{903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "capture was not ended in the same stream as it began", false},
	{904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "capturing stream has unjoined work", false},
	{905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "dependency created on uncaptured work in another stream", false},
	{906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "operation would make the legacy stream depend on a capturing blocking stream", false},
	{907, "CUDA_ERROR_CAPTURED_EVENT", "operation not permitted on an event last recorded in a capturing stream", false},
	{908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "attempt to terminate a thread-local capture sequence from another thread", false},
	{909, "CUDA_ERROR_TIMEOUT", "wait operation timed out", false},
	{910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update", false},
	{911, "CUDA_ERROR_EXTERNAL_DEVICE", "an async error has occurred in external entity outside of CUDA", true},
	{912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "a kernel launch failed due to cluster misconfiguration", false},
	{913, "CUDA_ERROR_FUNCTION_NOT_LOADED", "the function handle is not loaded when calling an API that requires a loaded function", false},
	{914, "CUDA_ERROR_INVALID_RESOURCE_TYPE", "one or more resources passed in are not valid resource types for the operation", false},
	{915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", "one or more resources are insufficient or non-applicable for the operation", false},
	{916, "CUDA_ERROR_KEY_ROTATION", "an error occurred during the key rotation sequence", false},
	{917, "CUDA_ERROR_STREAM_DETACHED", "the requested operation is not permitted because the stream is in a detached state", false},
	{918, "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE", "graph recapture failed and had to be terminated", false},
	{999, "CUDA_ERROR_UNKNOWN", "unknown error", false},
}

// lookup returns the table entry for r, or false for a code this table
// does not know (a driver newer than the table).
func (r Result) lookup() (resultInfo, bool) {
	// The table is sorted by code: binary search.
	lo, hi := 0, len(results)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if results[m].code < r {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(results) && results[lo].code == r {
		return results[lo], true
	}
	return resultInfo{}, false
}

// Name is the cuda.h enumerator of r, such as "CUDA_ERROR_ILLEGAL_ADDRESS".
// A code unknown to this package is named "CUresult(N)".
func (r Result) Name() string {
	if info, ok := r.lookup(); ok {
		return info.name
	}
	return "CUresult(" + strconv.Itoa(int(r)) + ")"
}

// String returns Name.
func (r Result) String() string { return r.Name() }

// Sticky reports whether r leaves the CUDA context unusable: every later
// call in the process fails with the same error, and only a restart of the
// process recovers.
func (r Result) Sticky() bool {
	info, _ := r.lookup()
	return info.sticky
}

// staticMessage is the description of r from the built-in table.
func (r Result) staticMessage() string {
	if info, ok := r.lookup(); ok {
		return info.msg
	}
	return "unrecognized error code " + strconv.Itoa(int(r)) + " (the driver is newer than this package)"
}
