package nvrtc_test

import "os"

func tempDir() (string, func()) {
	d, err := os.MkdirTemp("", "gocu-example-")
	if err != nil {
		panic(err)
	}
	return d, func() { os.RemoveAll(d) }
}
