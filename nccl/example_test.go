package nccl_test

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nccl"
)

// One process drives every GPU of the host: one rank per GPU, and each
// collective issued on all ranks inside one Group.
func Example() {
	devs, err := cuda.Devices()
	if err != nil {
		log.Fatal(err)
	}
	comms, err := nccl.InitAll(devs)
	if err != nil {
		log.Fatal(err)
	}
	const n = 1 << 20
	grads := make([]*cuda.Memory, len(devs))
	for i, d := range devs {
		if grads[i], err = cuda.AllocSlice[float32](d, n); err != nil {
			log.Fatal(err)
		}
	}
	// Average the gradients in place on every GPU.
	err = nccl.Group(func() error {
		for i, c := range comms {
			if err := c.AllReduce(grads[i], grads[i], n, nccl.Float32, nccl.Avg, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	for i, c := range comms {
		_ = devs[i].Synchronize()
		_ = grads[i].Free()
		_ = c.Destroy()
	}
}

// One process per GPU, on one host or many: a launcher (or rank 0) makes
// the unique id and hands it to every process, here in the environment.
func ExampleInitRank() {
	id, err := nccl.ParseUniqueID(os.Getenv("NCCL_ID")) // id.String() from the process that made it
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := strconv.Atoi(os.Getenv("RANK"))
	world, _ := strconv.Atoi(os.Getenv("WORLD_SIZE"))
	local, _ := strconv.Atoi(os.Getenv("LOCAL_RANK"))
	dev, err := cuda.DeviceAt(local)
	if err != nil {
		log.Fatal(err)
	}
	comm, err := nccl.InitRank(id, world, rank, dev) // returns when all ranks have joined
	if err != nil {
		log.Fatal(err)
	}
	defer comm.Destroy()
	fmt.Printf("rank %d of %d on %v\n", comm.Rank(), comm.Size(), dev)
}

// Send and Recv that pair up go in one Group, or they wait for each other
// forever. Here each rank passes its block to the next one in a ring.
func ExampleGroup() {
	var comm *nccl.Comm // from InitRank
	var send, recv *cuda.Memory
	var stream *cuda.Stream
	const n = 4096
	next := (comm.Rank() + 1) % comm.Size()
	prev := (comm.Rank() + comm.Size() - 1) % comm.Size()
	err := nccl.Group(func() error {
		if err := comm.Send(send, n, nccl.Float32, next, stream); err != nil {
			return err
		}
		return comm.Recv(recv, n, nccl.Float32, prev, stream)
	})
	if err != nil {
		log.Fatal(err)
	}
}

// A collective that does not finish (a rank died) is ended by Abort from
// another goroutine; the process can then make a new communicator.
func ExampleComm_Abort() {
	var comm *nccl.Comm // from InitRank
	var buf *cuda.Memory
	var stream *cuda.Stream
	done := make(chan error, 1)
	go func() {
		if err := comm.AllReduce(buf, buf, 1024, nccl.Float32, nccl.Sum, stream); err != nil {
			done <- err
			return
		}
		done <- stream.Synchronize()
	}()
	select {
	case err := <-done:
		if err == nil {
			err = comm.AsyncError()
		}
		if err != nil {
			log.Print(err)
			_ = comm.Abort()
		}
	case <-time.After(time.Minute):
		_ = comm.Abort() // unblocks the collective
	}
}

// TypeOf gives the data type of a Go element type, for generic code.
func ExampleTypeOf() {
	fmt.Println(nccl.TypeOf[float32](), nccl.TypeOf[int64](), nccl.TypeOf[uint8]().Size())
	// Output: float32 int64 1
}

// A unique id travels as text: an environment variable, a file, a flag.
func ExampleUniqueID_MarshalText() {
	var id nccl.UniqueID // from nccl.NewUniqueID()
	id[0], id[1] = 0x02, 0x00
	text, _ := id.MarshalText()
	back, err := nccl.ParseUniqueID(string(text))
	fmt.Println(len(text), string(text[:8]), back == id, err)
	// Output: 256 02000000 true <nil>
}
