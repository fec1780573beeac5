package array

import "testing"

func TestCUDAStream(t *testing.T) {
	var none *Device
	if CPU().CUDAStream() != nil || none.CUDAStream() != nil {
		t.Error("the CPU (or a nil device) has a CUDA stream")
	}
	if GPUCount() == 0 {
		return
	}
	d, err := GPU(0)
	if err != nil {
		t.Skipf("GPU 0: %v", err)
	}
	s := d.CUDAStream()
	if s == nil || s != d.CUDAStream() || s.Device() == nil {
		t.Fatalf("GPU stream %v", s)
	}
	// Work queued by the device is ordered on that stream.
	x := d.Ones(Float32, 1<<20).Mul(3).Eval()
	defer x.Close()
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if done, err := s.Query(); err != nil || !done {
		t.Errorf("after Synchronize: done %v, %v", done, err)
	}
}
