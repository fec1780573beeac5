package nvrtc

import (
	"fmt"
	"slices"
)

// TargetFor returns the Arch to compile for a GPU of compute capability
// major.minor: a CUBIN target ("sm_90") when this NVRTC knows the GPU, else
// PTX for the newest architecture it knows below it ("compute_90" on a newer
// GPU), which the driver compiles for the GPU at load time.
func TargetFor(major, minor int) (string, error) {
	archs, err := SupportedArchs()
	if err != nil {
		return "", err
	}
	return chooseTarget(major*10+minor, archs)
}

func chooseTarget(cc int, supported []int) (string, error) {
	if slices.Contains(supported, cc) {
		return fmt.Sprintf("sm_%d", cc), nil
	}
	best := -1
	for _, a := range supported {
		if a < cc && a > best {
			best = a
		}
	}
	if best < 0 {
		return "", fmt.Errorf("nvrtc: this NVRTC compiles for %v, nothing at or below compute capability %d.%d", supported, cc/10, cc%10)
	}
	return fmt.Sprintf("compute_%d", best), nil
}
