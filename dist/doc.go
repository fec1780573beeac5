// Package dist spreads array work over several devices: the collectives of
// data-parallel training on arrays (all-reduce, broadcast, reduce-scatter,
// all-gather) and the all-to-all exchange of pieces of any length that
// moves rows between ranks (AllToAll), on GPUs through NCCL and on the CPU
// through a host backend that stands in for it.
//
// A Comm connects ranks, one per device. One process drives several GPUs
// with New (nccl.InitAll underneath); one process per GPU, on one host or
// many, uses NewID in one process, passes the id's text to the others out
// of band, and every process calls Join (nccl.InitRank underneath):
//
//	c, err := dist.New(gpu0, gpu1)                 // one process, two GPUs
//	err = c.AllReduce(dist.Avg, grad0, grad1)       // one array per rank, in place
//	err = c.Broadcast(0, w0, w1)                    // rank 0's values everywhere
//
//	id, err := dist.NewID(gocu.CUDA)                // in the launcher; id.String() to the others
//	c, err := dist.Join(id, nranks, rank, dev)      // in each process, with its rank
//
// On GPUs a collective is queued on each device's default stream, which
// the arrays' own operations use, so it runs after the operations that
// produced its arrays (the gradients of a backward pass) and before those
// that follow (the optimiser's step), and nothing waits on the host.
// Group issues several collectives as one NCCL group: a model's gradients
// reduce at about the cost of one.
//
// # Data-parallel training
//
// DDP overlaps the reduction of gradients with the backward pass, as
// PyTorch's DistributedDataParallel: buckets of gradients are all-reduced
// as soon as the pass has made them (grad.Var.OnGradReady), on GPUs on a
// communication stream ordered by events; Wait before the optimiser's
// step. ZeRO1 shards the optimiser's state across the ranks (ZeRO stage
// 1): ReduceScatter of the gradients, the update of each rank's shard,
// AllGather of the parameters.
//
// # All-to-all
//
// AllToAll sends each rank's piece for every other rank, as a shuffle of
// a distributed group-by or join needs (package frame's Shards). The
// pieces' lengths go first (an AllGather read back to the host, so that
// receivers allocate), then on GPUs every piece through NCCL's send and
// receive, issued in one NCCL group. The host backend copies within a
// process; across processes its hub routes the pieces, unread.
//
// # Why a package of its own
//
// Package nccl is a binding: it moves device memory and knows nothing of
// arrays, as the layer rule wants (bindings import nothing above them).
// dist sits above array and below the training code, and is where a
// backend other than NCCL fits.
//
// # The host backend
//
// Without GPUs, New takes CPU (or simulator) devices, the same one as
// often as ranks are wanted: dist.New(cpu, cpu, cpu, cpu) is four ranks,
// each with its own arrays, and a collective is array operations on them.
// Across processes, NewID(gocu.CPU) starts a hub in the calling process
// (listening on GOCU_DIST_HUB, default 127.0.0.1 and a free port) that
// every rank's Join connects to; each collective sends every rank's array
// to the hub, which reduces in rank order and sends the result back. It is
// not fast; it exists so that data-parallel code, the launcher of one
// process per rank included, runs and is tested on machines without GPUs,
// with the same results as on GPUs up to float rounding. A rank that
// fails or calls another collective is reported to the others (ErrPeer)
// instead of hanging them, and so is a rank that does not join, or call
// the collective the others called, within GOCU_DIST_TIMEOUT
// (DefaultTimeout, ten minutes, as torch's; ErrTimeout names the rank).
//
// # A failed rank does not hang the others
//
// NCCL waits forever for a rank that stopped. On GPUs a watchdog, as
// torch's, follows every collective with an event, polls the events and
// NCCL's asynchronous error (ncclCommGetAsyncError), and when a collective
// has not completed within GOCU_DIST_TIMEOUT, or NCCL reports a rank that
// crashed, aborts the communicator (ncclCommAbort): the kernels that wait
// end, a host waiting on the device returns, and Comm.Err and every later
// call return the error (ErrTimeout or ErrPeer). GOCU_DIST_TIMEOUT=off
// turns the watchdog off. NCCL cannot say which rank is missing; Launch
// (and `gocu train --ranks`) can: it names the rank that exited, or the
// one still running when the others timed out.
//
// # Results
//
// Sum, Prod, Max and Min are NCCL's; Avg multiplies each rank's floats by
// 1/Size() and sums them (integers: the sum divided, truncated), as NCCL
// does. With one rank every collective leaves the arrays as they are, so a
// data-parallel program on one GPU computes exactly what it computes
// without dist. With several ranks the order of the additions differs from
// one device's, so results agree up to float rounding.
package dist
