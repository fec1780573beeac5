//go:build !unix

package owner

import "io/fs"

func of(fs.FileInfo) (uid, me uint32, ok bool) { return 0, 0, false }
