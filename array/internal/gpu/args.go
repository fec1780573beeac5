package gpu

import "github.com/gocu-dev/gocu/cuda"

// maxFastArgs is the most kernel arguments run binds into a stack array
// (more take a heap slice). Generated kernels take only 8-byte parameters
// (pointers, long long, unsigned long long, double), so every argument
// travels as a uint64 holding its bits, which is what the driver copies.
const maxFastArgs = 32

// launch queues fn with the arguments' bits (cuda's LaunchWords: no
// boxing, no allocation).
func launch(fn *cuda.Function, cfg *cuda.Config, v []uint64) error {
	return fn.LaunchWords(*cfg, v)
}
