package cuda

import (
	"errors"
	"runtime"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// fakeDriverAPI returns driver entry points that are libc and libm
// functions, so that the launch path can run on a machine without a GPU
// (the package's tests, and benchmarks built with -tags gocu_fakedriver):
// fegetround takes any arguments and returns 0 (success), labs returns its
// first argument (so a call whose first argument is N fails with CUresult
// N).
func fakeDriverAPI() (*api, error) {
	if runtime.GOOS != "linux" {
		return nil, errors.New("the fake driver uses glibc")
	}
	libc, err := dynlib.OpenFile("libc.so.6")
	if err != nil {
		return nil, errors.New("no libc to stand in for the driver: " + err.Error())
	}
	echo, _ := libc.Sym("labs")
	libm, err := dynlib.OpenFile("libm.so.6")
	if err != nil {
		return nil, errors.New("no libm to stand in for the driver: " + err.Error())
	}
	ok, _ := libm.Sym("fegetround") // returns FE_TONEAREST, 0, without a system call
	if ok == 0 || echo == 0 {
		return nil, errors.New("libc lacks labs or libm lacks fegetround")
	}
	a := &api{}
	for _, s := range a.symbols() {
		*s.dst = ok
	}
	a.cuGetErrorName, a.cuGetErrorString = 0, 0 // describe errors from the static table
	a.cuFuncGetParamInfo = 0                    // no parameter lists: launches are not counted
	a.cuStreamQuery = echo
	return a, nil
}

// fakeProps is an H100's launch limits.
var fakeProps = Props{
	Name: "fake H100", Major: 9, Minor: 0, Multiprocessors: 132,
	MaxThreadsPerBlock: 1024, MaxBlockDim: [3]int{1024, 1024, 64}, MaxGridDim: [3]int{1<<31 - 1, 65535, 65535},
	SharedMemPerBlock: 48 << 10, SharedMemPerBlockOptin: 227 << 10, WarpSize: 32,
}
