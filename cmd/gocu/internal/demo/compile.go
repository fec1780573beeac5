package demo

import (
	"fmt"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// Compile makes the lecture kernels ready to launch on dev. On a GPU, gocu
// gen's launchers compile the CUDA C++ of the whole of package kernels on
// their first launch on the device (NVRTC, cached on disk, so that later
// runs of a program load it); Compile makes that first launch, of
// lecture.Gray on one pixel, waits for it and checks the pixel, so that
// the times taken afterwards are the kernels' alone. On the simulator
// there is nothing to compile.
func Compile(dev *gocu.Device) (err error) {
	if dev == nil || dev.Kind() != gocu.CUDA {
		return nil
	}
	pixel := []uint8{30, 60, 90}
	rgb, err := gocu.FromSlice(dev, pixel)
	if err != nil {
		return err
	}
	defer freeInto(rgb, &err)
	gray, err := gocu.Alloc[uint8](dev, 1)
	if err != nil {
		return err
	}
	defer freeInto(gray, &err)
	if err := lecture.LaunchGray(dev, gocu.Grid1D(1, 32), rgb, gray, 1); err != nil {
		return fmt.Errorf("compiling the lecture kernels for %v: %w", dev, err)
	}
	got, err := gray.ToSlice()
	if err != nil {
		return err
	}
	if want := lecture.GrayReference(pixel, 1); got[0] != want[0] {
		return fmt.Errorf("lecture.Gray on %v made rgb(30,60,90) gray %d, want %d", dev, got[0], want[0])
	}
	return nil
}
