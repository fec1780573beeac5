package cuda

// api holds the addresses of the driver entry points gocu calls. Each name
// is the exported symbol that cuda.h's macros select for the modern API
// (cuMemAlloc is cuMemAlloc_v2, cuStreamDestroy is cuStreamDestroy_v2, ...),
// with the legacy default-stream semantics (no _ptsz/_ptds variants).
type api struct {
	cuInit                   uintptr
	cuDriverGetVersion       uintptr
	cuGetErrorName           uintptr
	cuGetErrorString         uintptr
	cuDeviceGetCount         uintptr
	cuDeviceGet              uintptr
	cuDeviceGetName          uintptr
	cuDeviceGetAttribute     uintptr
	cuDeviceTotalMem         uintptr // cuDeviceTotalMem_v2
	cuDevicePrimaryCtxRetain uintptr
	cuDevicePrimaryCtxRel    uintptr // cuDevicePrimaryCtxRelease_v2
	cuCtxGetCurrent          uintptr
	cuCtxSetCurrent          uintptr
	cuCtxSynchronize         uintptr
	cuMemGetInfo             uintptr // cuMemGetInfo_v2
	cuMemAlloc               uintptr // cuMemAlloc_v2
	cuMemFree                uintptr // cuMemFree_v2
	cuMemHostAlloc           uintptr
	cuMemFreeHost            uintptr
	cuMemcpyHtoD             uintptr // cuMemcpyHtoD_v2
	cuMemcpyDtoH             uintptr // cuMemcpyDtoH_v2
	cuMemcpyDtoD             uintptr // cuMemcpyDtoD_v2
	cuMemcpyHtoDAsync        uintptr // cuMemcpyHtoDAsync_v2
	cuMemcpyDtoHAsync        uintptr // cuMemcpyDtoHAsync_v2
	cuMemcpyDtoDAsync        uintptr // cuMemcpyDtoDAsync_v2
	cuMemsetD8               uintptr // cuMemsetD8_v2
	cuMemsetD16              uintptr // cuMemsetD16_v2
	cuMemsetD32              uintptr // cuMemsetD32_v2
	cuMemsetD8Async          uintptr
	cuMemsetD16Async         uintptr
	cuMemsetD32Async         uintptr
	cuStreamCreate           uintptr
	cuStreamCreateWithPrio   uintptr // cuStreamCreateWithPriority
	cuStreamDestroy          uintptr // cuStreamDestroy_v2
	cuStreamSynchronize      uintptr
	cuStreamQuery            uintptr
	cuStreamWaitEvent        uintptr
	cuStreamBeginCapture     uintptr // cuStreamBeginCapture_v2
	cuStreamEndCapture       uintptr
	cuStreamIsCapturing      uintptr
	cuEventCreate            uintptr
	cuEventDestroy           uintptr // cuEventDestroy_v2
	cuEventRecord            uintptr
	cuEventSynchronize       uintptr
	cuEventQuery             uintptr
	cuEventElapsedTime       uintptr // cuEventElapsedTime_v2 where the driver has it
	cuModuleLoadDataEx       uintptr
	cuModuleUnload           uintptr
	cuModuleGetFunction      uintptr
	cuModuleGetGlobal        uintptr // cuModuleGetGlobal_v2
	cuFuncGetAttribute       uintptr
	cuFuncSetAttribute       uintptr
	cuOccupancyMaxBlockSize  uintptr // cuOccupancyMaxPotentialBlockSize
	cuOccupancyMaxActive     uintptr // cuOccupancyMaxActiveBlocksPerMultiprocessor
	cuLaunchKernel           uintptr
	cuGraphInstantiate       uintptr // cuGraphInstantiateWithFlags
	cuGraphLaunch            uintptr
	cuGraphUpload            uintptr
	cuGraphExecDestroy       uintptr
	cuGraphDestroy           uintptr
	cuGraphGetNodes          uintptr
	cuGraphExecUpdate        uintptr // cuGraphExecUpdate_v2; optional
	cuFuncGetParamInfo       uintptr // optional (CUDA 12.4): a kernel's parameters, for argument checks
}

// symbol names one entry point: the exported names to try, in order of
// preference, and where to store the address.
type symbol struct {
	names    []string
	dst      *uintptr
	optional bool // absent on older drivers; the features using it report ErrNotSupported
}

func (a *api) symbols() []symbol {
	s := func(dst *uintptr, names ...string) symbol { return symbol{names: names, dst: dst} }
	opt := func(dst *uintptr, names ...string) symbol { return symbol{names: names, dst: dst, optional: true} }
	return []symbol{
		s(&a.cuInit, "cuInit"),
		s(&a.cuDriverGetVersion, "cuDriverGetVersion"),
		s(&a.cuGetErrorName, "cuGetErrorName"),
		s(&a.cuGetErrorString, "cuGetErrorString"),
		s(&a.cuDeviceGetCount, "cuDeviceGetCount"),
		s(&a.cuDeviceGet, "cuDeviceGet"),
		s(&a.cuDeviceGetName, "cuDeviceGetName"),
		s(&a.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		s(&a.cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
		s(&a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		s(&a.cuDevicePrimaryCtxRel, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
		s(&a.cuCtxGetCurrent, "cuCtxGetCurrent"),
		s(&a.cuCtxSetCurrent, "cuCtxSetCurrent"),
		s(&a.cuCtxSynchronize, "cuCtxSynchronize"),
		s(&a.cuMemGetInfo, "cuMemGetInfo_v2"),
		s(&a.cuMemAlloc, "cuMemAlloc_v2"),
		s(&a.cuMemFree, "cuMemFree_v2"),
		s(&a.cuMemHostAlloc, "cuMemHostAlloc"),
		s(&a.cuMemFreeHost, "cuMemFreeHost"),
		s(&a.cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
		s(&a.cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
		s(&a.cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
		s(&a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		s(&a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		s(&a.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		s(&a.cuMemsetD8, "cuMemsetD8_v2"),
		s(&a.cuMemsetD16, "cuMemsetD16_v2"),
		s(&a.cuMemsetD32, "cuMemsetD32_v2"),
		s(&a.cuMemsetD8Async, "cuMemsetD8Async"),
		s(&a.cuMemsetD16Async, "cuMemsetD16Async"),
		s(&a.cuMemsetD32Async, "cuMemsetD32Async"),
		s(&a.cuStreamCreate, "cuStreamCreate"),
		s(&a.cuStreamCreateWithPrio, "cuStreamCreateWithPriority"),
		s(&a.cuStreamDestroy, "cuStreamDestroy_v2"),
		s(&a.cuStreamSynchronize, "cuStreamSynchronize"),
		s(&a.cuStreamQuery, "cuStreamQuery"),
		s(&a.cuStreamWaitEvent, "cuStreamWaitEvent"),
		s(&a.cuStreamBeginCapture, "cuStreamBeginCapture_v2"),
		s(&a.cuStreamEndCapture, "cuStreamEndCapture"),
		s(&a.cuStreamIsCapturing, "cuStreamIsCapturing"),
		s(&a.cuEventCreate, "cuEventCreate"),
		s(&a.cuEventDestroy, "cuEventDestroy_v2"),
		s(&a.cuEventRecord, "cuEventRecord"),
		s(&a.cuEventSynchronize, "cuEventSynchronize"),
		s(&a.cuEventQuery, "cuEventQuery"),
		s(&a.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		s(&a.cuModuleLoadDataEx, "cuModuleLoadDataEx"),
		s(&a.cuModuleUnload, "cuModuleUnload"),
		s(&a.cuModuleGetFunction, "cuModuleGetFunction"),
		s(&a.cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
		s(&a.cuFuncGetAttribute, "cuFuncGetAttribute"),
		s(&a.cuFuncSetAttribute, "cuFuncSetAttribute"),
		s(&a.cuOccupancyMaxBlockSize, "cuOccupancyMaxPotentialBlockSize"),
		s(&a.cuOccupancyMaxActive, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
		s(&a.cuLaunchKernel, "cuLaunchKernel"),
		s(&a.cuGraphInstantiate, "cuGraphInstantiateWithFlags"),
		s(&a.cuGraphLaunch, "cuGraphLaunch"),
		opt(&a.cuGraphUpload, "cuGraphUpload"),
		s(&a.cuGraphExecDestroy, "cuGraphExecDestroy"),
		s(&a.cuGraphDestroy, "cuGraphDestroy"),
		s(&a.cuGraphGetNodes, "cuGraphGetNodes"),
		opt(&a.cuGraphExecUpdate, "cuGraphExecUpdate_v2"),
		opt(&a.cuFuncGetParamInfo, "cuFuncGetParamInfo"),
	}
}
