//go:build unix

package gocu

import (
	"io/fs"
	"os"
	"syscall"
)

// fileOwner returns the uid owning a file and the current uid.
func fileOwner(st fs.FileInfo) (uid, me uint32, ok bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return s.Uid, uint32(os.Getuid()), true
}
