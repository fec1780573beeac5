package hostmem

import (
	"math"
	"strings"
	"testing"
)

// Check refuses byte counts that overflow an int and requests beyond the
// machine's memory, and passes small ones.
func TestCheck(t *testing.T) {
	if err := Check(1<<10, 8, "float64"); err != nil {
		t.Errorf("1 KiB: %v", err)
	}
	if err := Check(math.MaxInt/4, 8, "float64"); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("an overflowing count: %v", err)
	}
	if err := Check(-1, 8, "float64"); err == nil {
		t.Error("a negative count: no error")
	}
	mem := Limit()
	if mem == 0 {
		t.Skip("the machine's memory is unknown here")
	}
	if err := Check(int(mem/8)+1, 8, "float64"); err == nil || !strings.Contains(err.Error(), "more than the machine can give") {
		t.Errorf("one element past the limit of %d bytes: %v", mem, err)
	}
}
