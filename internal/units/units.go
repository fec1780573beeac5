// Package units formats what gocu prints for people, each in one way
// wherever it appears (gocu bench, the profiler, gocu demo and gray, gocu
// devices and cache, the allocator's messages): durations, byte sizes and
// rates, with three significant digits, a space and the unit ("1.50 us",
// "256 MiB", "51.3 TFLOP/s"); and errors cut to one line for a table cell
// or a parenthesis (OneLine).
//
// It imports only the standard library, so that every package of gocu,
// the driver bindings included, may use it.
package units

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Sig prints v with three significant digits; numbers of 100 and more keep
// all their integer digits and no fraction ("1234"), numbers below 0.01
// take two significant digits in %g form ("0.0012", "1.2e-05").
func Sig(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// Duration prints d in ns, us, ms or s, whichever puts one to three digits
// before the point: "999 ns", "1.50 us", "125 ms", "2.00 s". Zero is "0 s".
func Duration(d time.Duration) string { return Seconds(d.Seconds()) }

// Seconds is Duration for a time given in seconds, which may be a
// fraction of a nanosecond.
func Seconds(s float64) string {
	a := math.Abs(s)
	switch {
	case a == 0 || a >= 1:
		return Sig(s) + " s"
	case a >= 1e-3:
		return Sig(s*1e3) + " ms"
	case a >= 1e-6:
		return Sig(s*1e6) + " us"
	}
	return Sig(s*1e9) + " ns"
}

// Bytes prints n bytes in B, KiB, MiB, GiB, TiB or PiB (powers of 1024):
// "1023 B", "1.50 KiB", "256 MiB".
func Bytes(n int64) string {
	const k = 1024
	if n < k && n > -k {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= k
		if math.Abs(f) < k-0.5 {
			return Sig(f) + " " + u
		}
	}
	return Sig(f/k) + " PiB"
}

// FLOPRate prints floating-point operations per second in GFLOP/s, or in
// TFLOP/s from 1000 GFLOP/s up: "4.25 GFLOP/s", "51.3 TFLOP/s".
func FLOPRate(perSecond float64) string {
	if math.Abs(perSecond) >= 1e12 {
		return Sig(perSecond/1e12) + " TFLOP/s"
	}
	return Sig(perSecond/1e9) + " GFLOP/s"
}

// OneLine returns err in one line: the Summary of the first error in its
// chain that has one (a missing library says how many places were
// searched rather than listing them: *cuda.LoadError,
// *dynlib.NotFoundError), else the first line of its message. nil gives "".
func OneLine(err error) string {
	if err == nil {
		return ""
	}
	var s interface{ Summary() string }
	if errors.As(err, &s) {
		return s.Summary()
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}
