// Package nccl is a thin binding of NVIDIA's NCCL, the library that moves
// and reduces data between GPUs (all-reduce, broadcast, reduce, all-gather,
// reduce-scatter, send and receive), over NVLink, PCIe, shared memory and
// the network. Like the rest of gocu it is pure Go: libnccl is loaded at
// run time through purego, and nothing needs cgo or a CUDA toolkit to
// build.
//
// It binds what data-parallel training and multi-GPU array code need:
// communicator creation for one process driving several GPUs (InitAll) and
// for one process per GPU, on one host or many (NewUniqueID, InitRank);
// the collectives and Send/Recv on gocu's device memory (*cuda.Memory) and
// streams (*cuda.Stream); groups (Group); and the error handling that lets
// a process survive a failed or hung communicator (Abort, AsyncError).
//
// # Calls are asynchronous
//
// A collective checks its arguments, queues the work on the stream and
// returns. The data is there once the stream has reached it: synchronise
// the stream, record an event, or queue the next kernel on the same
// stream. A nil stream is the device's default stream. Buffers are device
// memory on the communicator's device; send and recv may be one Memory (in
// place), and Memory.View passes part of an allocation. Counts are in
// elements of the DataType; TypeOf[T] gives the type of a Go element type
// for generic code:
//
//	err := c.AllReduce(grad, grad, n, nccl.Float32, nccl.Avg, stream)
//
// Arguments are checked before NCCL sees them: a nil or freed buffer, one
// smaller than the count needs, one on another device, a negative or
// overflowing count, a root or peer out of range, a closed stream or a
// destroyed communicator is an error matching ErrInvalidArgument that says
// which argument is wrong.
//
// # Threads, contexts and groups
//
// NCCL uses the CUDA runtime, which works in the primary context of the
// device current on the calling OS thread, the same context package cuda
// uses. Every call of this package runs on a locked OS thread with the
// communicator's device context current (Device.WithContext), so any
// goroutine may call it.
//
// NCCL's group state (ncclGroupStart ... ncclGroupEnd) is per OS thread
// too. Group locks the calling goroutine to its thread for the whole
// group, so the calls fn makes are part of it; calls from other goroutines
// are not. One process driving several GPUs issues each collective on all
// its ranks in one Group:
//
//	err := nccl.Group(func() error {
//		for i, c := range comms {
//			if err := c.AllReduce(bufs[i], bufs[i], n, nccl.Float32, nccl.Sum, streams[i]); err != nil {
//				return err
//			}
//		}
//		return nil
//	})
//
// When fn fails, Group cancels the group so that no rank's half of a
// collective is launched without its partners.
//
// # One process per GPU, and several hosts
//
// The NCCL way to span hosts is one process per GPU. One process (rank 0,
// say) calls NewUniqueID and passes the id to the others out of band: its
// text form (String, MarshalText) travels in an environment variable, a
// file, a pipe or a key-value store. Every process then calls
//
//	comm, err := nccl.InitRank(id, nranks, rank, dev)
//
// which returns when all nranks have joined. The id holds the address
// where the process that made it listens for the ranks to meet, so that
// process must stay alive until InitRank has returned everywhere, and the
// other hosts must reach it (NCCL_SOCKET_IFNAME picks the interface). The
// package's tests do exactly this on one host: the test binary starts
// itself once per GPU with the id in GOCU_NCCL_TEST_ID.
//
// # Several ranks on one GPU
//
// NCCL 2.5 to 2.29 refuse two ranks of one communicator on the same GPU,
// whether from InitAll with a device listed twice or from two processes,
// with ErrInvalidUsage ("Duplicate GPU detected"); NCCL's documentation
// says such use "may lead to hangs". NCCL 2.30 allows it when
// NCCL_MULTI_RANK_GPU_ENABLE=1 is in the environment. The refusal is a
// clean error: the process stays usable.
//
// TODO(gpu): this paragraph is read from NCCL's source; TestGPUSeveralRanksOneGPU
// (go test ./nccl -run TestGPUSeveralRanksOneGPU -v, lines "RESULT NCCL ...")
// tells what the installed NCCL does; write the version and outcome here.
//
// # Errors and recovery
//
// A failed NCCL call is an *Error with the function, the ncclResult_t, its
// name, NCCL's description and, when there is one, NCCL's last warning.
// Sentinels (ErrInvalidUsage, ErrRemote, ErrUnhandledCUDA, ...) match with
// errors.Is. Errors found while the work runs, such as a peer that died,
// surface through AsyncError; a collective that hangs because a rank is
// gone is ended by Abort from another goroutine. After an error or an
// Abort the process stays usable and new communicators can be made.
// Destroy (or Abort) every communicator: there is no garbage-collector
// backstop, as freeing one can wait for the GPU.
//
// # The library
//
// GOCU_NCCL_LIB names the file to load. Otherwise the dynamic loader is
// asked for libnccl.so.2 and libnccl.so, then the usual directories
// (/usr/lib/x86_64-linux-gnu, /usr/local/cuda/lib64, ...) and the pip
// wheels that PyTorch installs (site-packages/nvidia/nccl/lib) of the
// active virtualenv or conda environment, /opt/*/.venv and ~/.local. When
// nothing loads, the error (errors.Is(err, ErrNoLibrary)) lists every place
// tried; a file that is not NCCL 2.14 or newer, or lacks an entry point, is
// named with the reason. Loading needs no GPU; NCCL needs the CUDA driver
// when a communicator is created.
package nccl
