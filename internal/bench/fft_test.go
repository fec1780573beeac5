package bench

import "testing"

// The FFT and complex workloads run and check their results on the CPU.
func TestFFTWorkloadsOnCPU(t *testing.T) {
	names := []string{"fft_c64", "rfft_f32", "fft2_c64", "fft_batched_c64", "complex_mul_abs_c64", "matmul_c64"}
	rep, err := Run(Options{Device: CPU, Suite: "linalg", Only: names, Small: true, Reps: 2, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		x := rep.Result(name)
		if x == nil || x.Error != "" || x.Skipped != "" || x.Seconds <= 0 {
			t.Errorf("%s: %+v", name, x)
		}
	}
}
