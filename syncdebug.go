package gocu

import "github.com/gocu-dev/gocu/internal/syncdebug"

// SyncDebugMode says what gocu does when an operation makes the host wait
// for a GPU, like torch.cuda.set_sync_debug_mode. Such waits are what make
// GPU programs slow: the GPU idles while the host catches up.
type SyncDebugMode int32

// The modes. GOCU_SYNC_DEBUG=warn or =error sets the initial one.
const (
	// SyncDebugOff reports nothing (the default). It costs an operation one
	// atomic load.
	SyncDebugOff = SyncDebugMode(syncdebug.Off)
	// SyncDebugWarn writes one line to standard error for each wait,
	// naming the call site in the program: the first caller outside gocu's
	// packages. A call site that keeps waiting is reported again every
	// 5 seconds at most, with the count of the reports held back.
	SyncDebugWarn = SyncDebugMode(syncdebug.Warn)
	// SyncDebugError makes the operation fail with an error matching
	// ErrHiddenSync, before it waits, instead. An allocation that finds the
	// device full and waits to retry is only warned about.
	SyncDebugError = SyncDebugMode(syncdebug.Error)
)

func (m SyncDebugMode) String() string { return syncdebug.Mode(m).String() }

// ErrHiddenSync is matched (errors.Is) by the error of an operation that
// SyncDebugError refused because it would wait for the GPU.
var ErrHiddenSync = syncdebug.ErrHiddenSync

// SyncError is the error of an operation that SyncDebugError refused: the
// operation, why it waits and the call site.
type SyncError = syncdebug.SyncError

// SetSyncDebugMode sets the mode for the whole process and returns the
// previous one.
//
// These operations wait for a GPU and are reported: Buffer.CopyTo,
// CopyFrom, ToSlice and FromSlice; Buffer.CopyToAsync into pageable memory
// (memory that cuda.Device.AllocHost did not return), which the driver
// completes before returning; a launch with In, Out or InOut buffers; an
// allocation that finds the device full and empties the cache to retry;
// and, in package array, every read of an array to the host (Item,
// ToSlice, Float32s and the like, String, To another device, WriteNPY).
// Explicit waits are never reported: Device.Synchronize,
// Stream.Synchronize, array's Sync, TrimCache. On the CPU and the
// simulator nothing waits for a device, and nothing is reported.
func SetSyncDebugMode(m SyncDebugMode) SyncDebugMode {
	return SyncDebugMode(syncdebug.Set(syncdebug.Mode(m)))
}

// SyncDebug returns the mode SetSyncDebugMode or GOCU_SYNC_DEBUG set.
func SyncDebug() SyncDebugMode { return SyncDebugMode(syncdebug.Get()) }
