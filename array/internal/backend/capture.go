package backend

import "errors"

// ErrCapture is wrapped by the error of a call that a CUDA graph capture
// forbids (a read to the host, a wait for the device, a copy from host
// memory, a second capture): the backend refuses it before it reaches
// the driver, so the capture stays valid.
var ErrCapture = errors.New("not allowed while a CUDA graph is being captured")
