package array

import "testing"

func TestMemory(t *testing.T) { checkMemory(t, CPU()) }

func TestMemoryGPU(t *testing.T) { checkMemory(t, testGPU(t)) }

// checkMemory allocates and closes arrays of known sizes and checks that
// Memory counts them in use and keeps their peak until ResetPeakMemory.
func checkMemory(t *testing.T, d *Maker) {
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	d.ResetPeakMemory()
	base := d.Memory()
	if base.Peak != base.InUse {
		t.Fatalf("after ResetPeakMemory: %+v, want the peak equal to the bytes in use", base)
	}
	x := d.Zeros(Float32, mib/4).Copy() // 1 MiB
	y := d.Zeros(Float64, mib/4).Copy() // 2 MiB
	if err := errs(x.Err(), y.Err()); err != nil {
		t.Fatal(err)
	}
	// A GPU's allocator rounds large requests to 2 MiB; the collector may
	// free other tests' dropped arrays meanwhile (a few KiB).
	const drift = 256 << 10
	slack := int64(drift)
	if d.IsGPU() {
		slack += 1 * mib
	}
	in := func(what string, got, want int64) {
		t.Helper()
		if got < want-drift || got > want+slack {
			t.Errorf("%s: %d bytes, want %d (-%d, +%d)", what, got, want, drift, slack)
		}
	}
	in("in use with 3 MiB of arrays", d.Memory().InUse-base.InUse, 3*mib)
	y.Close()
	st := d.Memory()
	in("in use after closing 2 MiB", st.InUse-base.InUse, mib)
	in("the peak after closing 2 MiB", st.Peak-base.InUse, 3*mib)
	d.ResetPeakMemory()
	in("the peak after ResetPeakMemory", d.Memory().Peak-base.InUse, mib)
	x.Close()
	in("in use after closing all", d.Memory().InUse-base.InUse, 0)
}

func errs(es ...error) error {
	for _, e := range es {
		if e != nil {
			return e
		}
	}
	return nil
}
