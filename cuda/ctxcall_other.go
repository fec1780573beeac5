//go:build !(linux && amd64)

package cuda

// haveCtxTrampoline is false: frame.ctxCall makes the context check and
// the call as two purego calls.
const haveCtxTrampoline = false

func ctxTrampoline(*ctxBlock) { panic("cuda: no ctxCall trampoline on this platform") }
