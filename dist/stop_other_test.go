//go:build !unix

package dist_test

const canStop = false

func stopSelf() {}
