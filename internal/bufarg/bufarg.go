// Package bufarg connects package gocu's buffers to the runtime of the
// launchers that gocu gen writes (package launch), without making the
// connection part of gocu's API: gocu sets Use when it is initialised, and
// launch calls it for every buffer argument.
package bufarg

// Bound is an In, Out or InOut buffer given memory for one launch.
type Bound interface {
	// Detach copies the output back, after the launch completed, and
	// releases the memory.
	Detach() error
	// Release releases the memory without copying anything back, after a
	// failed launch.
	Release()
}

// Use checks buf (a *gocu.Buffer[T]) as an argument of a launch on dev (a
// *gocu.Device): not nil, not freed, not failed, on dev. It gives an In,
// Out or InOut buffer memory on dev and returns it as a Bound; nil for
// other buffers. Set by package gocu.
var Use func(buf, dev any) (Bound, error)
