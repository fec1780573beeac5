package cublas

import (
	"errors"
	"strings"
	"testing"
)

func TestBatchedLU(t *testing.T) {
	l := fakeLib(t)
	l.getrfBatched = [2]uintptr{l.sgemm, l.sgemm}
	l.getrsBatched = l.getrfBatched
	l.getriBatched = l.getrfBatched
	h := &Handle{h: 1, l: l, scal: new([3]uint64)}
	const p = 0x7f0000000000
	for _, d := range []bool{false, true} {
		if err := h.GetrfBatched(d, 32, p, 32, p, p, 4096); err != nil {
			t.Error(err)
		}
		if err := h.GetrsBatched(d, NoTrans, 32, 1, p, 32, p, p, 32, 4096); err != nil {
			t.Error(err)
		}
		if err := h.GetriBatched(d, 32, p, 32, p, p, 32, p, 4096); err != nil {
			t.Error(err)
		}
	}
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"lda":  {h.GetrfBatched(false, 32, p, 16, p, p, 2), "lda = 16"},
		"null": {h.GetrfBatched(true, 32, 0, 32, p, p, 2), "null pointer"},
		"op":   {h.GetrsBatched(false, Op(9), 32, 1, p, 32, p, p, 32, 2), "trans"},
		"ldb":  {h.GetrsBatched(false, NoTrans, 32, 1, p, 32, p, p, 8, 2), "ldb = 8"},
		"ldc":  {h.GetriBatched(false, 32, p, 32, p, p, 1, p, 2), "ldc = 1"},
	} {
		if !errors.Is(c.err, ErrInvalidArgument) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v", name, c.err)
		}
	}
}
