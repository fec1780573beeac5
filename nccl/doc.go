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
// streams (*cuda.Stream); groups (Group), which issue nothing when their
// function fails; and the error handling that lets a process survive a
// failed or hung communicator (Abort, AsyncError). Package dist builds the
// collectives of arrays, and data-parallel training, on it.
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
// One process driving several GPUs issues each collective on all its
// ranks in one Group, which issues them together (ncclGroupStart ...
// ncclGroupEnd) when its function returns nil:
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
// The calls inside are checked at once and recorded; if the function fails
// or panics, none of them reaches NCCL, so no rank's half of a collective
// is launched without its partners. (Making ncclGroupEnd fail on purpose
// does not do that: NCCL 2.28.3 refuses an invalid call inside a group
// early, without failing the group, and ncclGroupEnd launches the rest.)
// The group belongs to the calling goroutine, which Group locks to its OS
// thread, as NCCL keeps group state per thread; calls from other
// goroutines are not part of it.
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
// other hosts must reach it: NCCL picks a network interface by itself;
// NCCL_SOCKET_IFNAME names the one to use (eth0, ib0, ^docker), and
// NCCL_DEBUG=INFO shows which it took and the transports between the
// ranks (NVLink and shared memory inside a host, InfiniBand or sockets
// between hosts). The package's tests do exactly this on one host: the
// test binary starts itself once per GPU with the id in GOCU_NCCL_TEST_ID.
//
// A job across hosts, then, is one process per GPU on every host, each
// told its rank (0 to nranks-1, unique in the job), nranks, its GPU on the
// host (the local rank) and the id. Package dist carries that protocol
// for array programs: dist.Rendezvous has rank 0 make the id and serve it
// at an address every host reaches (as torchrun's MASTER_ADDR), dist.Env
// reads GOCU_DIST_RANK, GOCU_DIST_NRANKS, GOCU_DIST_LOCAL_RANK and
// GOCU_DIST_ADDR (or GOCU_DIST_ID), and `gocu train` is such a program.
// On two hosts of 8 GPUs, with host0 reachable on port 29500:
//
//	host0$ for g in 0 1 2 3 4 5 6 7; do GOCU_DIST_ADDR=host0:29500 GOCU_DIST_NRANKS=16 \
//	           GOCU_DIST_RANK=$g GOCU_DIST_LOCAL_RANK=$g gocu train --batch 16384 & done
//	host1$ for g in 0 1 2 3 4 5 6 7; do GOCU_DIST_ADDR=host0:29500 GOCU_DIST_NRANKS=16 \
//	           GOCU_DIST_RANK=$((8+g)) GOCU_DIST_LOCAL_RANK=$g gocu train --batch 16384 & done
//
// (Slurm's srun gives SLURM_PROCID and SLURM_LOCALID for the two ranks.)
// On one host, `gocu train --ranks 8` starts the eight processes itself.
// Only one host has been measured so far: the multi-host path is NCCL's
// own and is tested with several processes on one host.
//
// # Several ranks on one GPU
//
// NCCL 2.5 to 2.29 refuse two ranks of one communicator on the same GPU,
// whether from InitAll with a device listed twice or from two processes,
// with ErrInvalidUsage; NCCL's documentation says such use "may lead to
// hangs". Measured on an H100 with NCCL 2.28.3 (2026-11-25): InitAll with
// device 0 twice fails with ncclInvalidUsage, and two processes on device
// 0 fail in InitRank with ncclInvalidUsage, "Duplicate GPU detected : rank
// 0 and rank 1 both on CUDA device ..."; in both cases the process stays
// usable. NCCL 2.30 allows it when NCCL_MULTI_RANK_GPU_ENABLE=1 is in the
// environment (read from NCCL's source, not measured). A single rank on one
// GPU always works: every collective is then a copy (Avg divides by one),
// which is how the data-parallel code runs on one GPU.
//
// # Errors and recovery
//
// A failed NCCL call is an *Error with the function, the ncclResult_t, its
// name, NCCL's description and the warning NCCL logged during that call,
// if it logged one (never an older warning: see Error).
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
