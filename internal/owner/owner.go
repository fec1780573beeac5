// Package owner says who owns a file, for the on-disk caches that must
// refuse a directory another user could have planted.
package owner

import "io/fs"

// Of returns the uid owning the file st describes, and the current uid.
// ok is false off Unix, where the owner is not known.
func Of(st fs.FileInfo) (uid, me uint32, ok bool) { return of(st) }
