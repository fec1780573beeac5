//go:build !amd64

package sim

func fpCallers(pcs *[3]uintptr) { slowCallers(pcs) }

const haveFP = false
