package nvrtc

import (
	"strings"
	"testing"
)

func TestChooseTarget(t *testing.T) {
	nvrtc13 := []int{75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121}
	for _, c := range []struct {
		cc   int
		want string
	}{
		{90, "sm_90"}, {75, "sm_75"}, {121, "sm_121"},
		{130, "compute_121"}, // a GPU newer than the compiler: PTX, JIT-compiled by the driver
		{88, "compute_87"},
	} {
		got, err := chooseTarget(c.cc, nvrtc13)
		if err != nil || got != c.want {
			t.Errorf("chooseTarget(%d) = %q, %v; want %q", c.cc, got, err, c.want)
		}
		if _, _, err := ParseArch(got); err != nil {
			t.Errorf("%q is not a valid Arch: %v", got, err)
		}
	}
	if _, err := chooseTarget(70, nvrtc13); err == nil || !strings.Contains(err.Error(), "7.0") {
		t.Errorf("a GPU older than every supported arch: %v", err)
	}
}
