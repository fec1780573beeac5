package array

// Failed returns an array that carries err, as an array whose operation
// failed: every operation on it returns a failed array with err, and Err
// and every read report it. Packages built on arrays (layers, losses) use
// it to report their own errors through the same sticky chain.
func Failed(err error) *Array {
	if err == nil {
		err = errorf("Failed", ErrValue, "nil error")
	}
	return failed(err)
}

// EvalReaders evaluates every pending expression that reads a's memory,
// so that a kernel or a host loop may then write that memory in place
// (through AsBuffer) without changing what those expressions compute:
// laziness must not change results. Assign does this by itself; an
// optimiser that updates parameters with its own kernel calls it first.
func (a *Array) EvalReaders() error {
	s, err := a.force("EvalReaders")
	if err != nil {
		return err
	}
	s.st.flushDeps()
	return nil
}
