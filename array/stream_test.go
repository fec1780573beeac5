package array

import "testing"

func TestCUDAStream(t *testing.T) {
	var none *Maker
	if CPU().CUDAStream() != nil || none.CUDAStream() != nil {
		t.Error("the CPU (or a nil device) has a CUDA stream")
	}
	d := testGPU(t)
	s := d.CUDAStream()
	if s == nil || s != d.CUDAStream() || s != d.Device().Stream().CUDA() {
		t.Fatalf("GPU stream %v: want the gocu device's default stream %v", s, d.Device().Stream().CUDA())
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
