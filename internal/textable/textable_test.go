package textable

import (
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var b strings.Builder
	Write(&b, [][]string{{"name", "kind", "n"}, {"gray", "kernel", "12"}, {"a", "memcpy", "3"}}, 2)
	want := "name  kind     n\n" +
		"----------------\n" +
		"gray  kernel  12\n" +
		"a     memcpy   3\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	Write(&b, nil, 1)
	if b.Len() != 0 {
		t.Errorf("an empty table wrote %q", b.String())
	}
}
