package sim

// fpCallers stores the return address of its caller's frame and of the two
// frames above it. Implemented in assembly by walking frame pointers: about
// 3 ns, against 100-170 ns for runtime.Callers, which matters because every
// thread records its call site at every barrier. Its result is verified
// against runtime.Callers at start-up (see useFP).
//
//go:noescape
func fpCallers(pcs *[3]uintptr)

const haveFP = true
