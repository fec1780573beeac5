package owner

import (
	"os"
	"runtime"
	"testing"
)

func TestOf(t *testing.T) {
	st, err := os.Stat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	uid, me, ok := Of(st)
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		if ok {
			t.Errorf("Of = %d, %d, true off Unix", uid, me)
		}
		return
	}
	if !ok || uid != me || me != uint32(os.Getuid()) {
		t.Errorf("Of(own temp dir) = %d, %d, %v; want %d twice and true", uid, me, ok, os.Getuid())
	}
}
