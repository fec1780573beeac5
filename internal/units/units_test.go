package units

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Sig(0), "0"}, {Sig(1234.4), "1234"}, {Sig(-12.34), "-12.3"}, {Sig(1.5), "1.50"}, {Sig(0.25), "0.250"}, {Sig(0.0012), "0.0012"},
		{Duration(0), "0 s"}, {Duration(999), "999 ns"}, {Duration(1500), "1.50 us"}, {Duration(58500), "58.5 us"},
		{Duration(1234567), "1.23 ms"}, {Duration(125 * time.Millisecond), "125 ms"}, {Duration(2 * time.Second), "2.00 s"},
		{Duration(90 * time.Second), "90.0 s"}, {Seconds(3.8e-6), "3.80 us"}, {Seconds(0.5e-9), "0.500 ns"},
		{Bytes(0), "0 B"}, {Bytes(1023), "1023 B"}, {Bytes(-2048), "-2.00 KiB"}, {Bytes(1536), "1.50 KiB"}, {Bytes(1 << 20), "1.00 MiB"},
		{Bytes(256 << 20), "256 MiB"}, {Bytes(3 << 30), "3.00 GiB"}, {Bytes(5 << 40), "5.00 TiB"}, {Bytes(1 << 62), "4096 PiB"},
		{FLOPRate(4.25e9), "4.25 GFLOP/s"}, {FLOPRate(51.3e12), "51.3 TFLOP/s"}, {FLOPRate(999e9), "999 GFLOP/s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

type summarised struct{}

func (summarised) Error() string   { return "not found; tried:\n\ta\n\tb" }
func (summarised) Summary() string { return "not found (2 places searched)" }

func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("one line"), "one line"},
		{errors.New("first\nsecond\nthird"), "first"},
		{summarised{}, "not found (2 places searched)"},
		{fmt.Errorf("wrapped: %w", summarised{}), "not found (2 places searched)"},
	} {
		if got := OneLine(c.err); got != c.want {
			t.Errorf("OneLine(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
