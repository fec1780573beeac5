package dist

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// The headers NCCL's all-to-all gathers: lengths come back per rank, and
// ranks that disagree on the dtype or the shape are an error that names
// both (it is a hang otherwise).
func TestAllToAllHeaders(t *testing.T) {
	a := header{dtype: array.Float32, rest: []int{3, 4}, lens: []int{5, 0, 6}}.encode()
	b := header{dtype: array.Float32, rest: []int{3, 4}, lens: []int{1, 2, 0}}.encode()
	c := header{dtype: array.Float32, rest: []int{3}, lens: []int{1, 2, 3}}.encode()
	d := header{dtype: array.Int32, rest: []int{3, 4}, lens: []int{1, 2, 3}}.encode()
	if len(a) != len(c) {
		t.Fatalf("headers of %d and %d ints: every rank's must have one width", len(a), len(c))
	}
	lens, err := agree(slices.Concat(a, b, a), 3)
	if err != nil || !slices.Equal(lens[0], []int{5, 0, 6}) || !slices.Equal(lens[1], []int{1, 2, 0}) || !slices.Equal(lens[2], lens[0]) {
		t.Fatalf("lengths %v (%v)", lens, err)
	}
	for _, tc := range []struct {
		other []int64
		says  string
	}{
		{c, "rank 1 sends float32 pieces of shape [n 3], rank 0 float32 pieces of shape [n 3 4]"},
		{d, "rank 1 sends int32 pieces"},
	} {
		_, err := agree(slices.Concat(a, tc.other, a), 3)
		if !errors.Is(err, ErrPeer) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v, want ErrPeer saying %q", err, tc.says)
		}
	}
}
