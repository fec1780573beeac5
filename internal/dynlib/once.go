package dynlib

import "sync"

// Once opens a binding's library on first use and keeps the result, or
// the error, for the life of the process. It is what the bindings' Load,
// Available and LibraryPath report.
type Once[L any] struct {
	get  func() (L, error)
	path func(L) string
}

// NewOnce returns a Once that calls open on first use. path names the
// file or soname that an opened library came from.
func NewOnce[L any](open func() (L, error), path func(L) string) *Once[L] {
	return &Once[L]{get: sync.OnceValues(open), path: path}
}

// Lib returns the opened library, or why it could not be opened.
func (o *Once[L]) Lib() (L, error) { return o.get() }

// Err returns why the library could not be opened, or nil.
func (o *Once[L]) Err() error {
	_, err := o.get()
	return err
}

// Path returns the name or file the library was opened from, or Err.
func (o *Once[L]) Path() (string, error) {
	l, err := o.get()
	if err != nil {
		return "", err
	}
	return o.path(l), nil
}
