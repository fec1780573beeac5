//go:build unix

package owner

import (
	"io/fs"
	"os"
	"syscall"
)

func of(st fs.FileInfo) (uid, me uint32, ok bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return s.Uid, uint32(os.Getuid()), true
}
