package array

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu/lowp"
)

// PrintOptions control String, as numpy.set_printoptions.
type PrintOptions struct {
	Precision int // digits after the point for floats (8)
	Threshold int // arrays with more elements are summarised (1000)
	EdgeItems int // items shown at each end of a summarised axis (3)
	LineWidth int // characters per line (75)
}

var (
	printMu   sync.Mutex
	printOpts = PrintOptions{Precision: 8, Threshold: 1000, EdgeItems: 3, LineWidth: 75}
)

// SetPrintOptions sets how arrays print; zero fields keep their value. It
// returns the previous options.
func SetPrintOptions(o PrintOptions) PrintOptions {
	printMu.Lock()
	defer printMu.Unlock()
	old := printOpts
	if o.Precision > 0 {
		printOpts.Precision = o.Precision
	}
	if o.Threshold > 0 {
		printOpts.Threshold = o.Threshold
	}
	if o.EdgeItems > 0 {
		printOpts.EdgeItems = o.EdgeItems
	}
	if o.LineWidth > 0 {
		printOpts.LineWidth = o.LineWidth
	}
	return old
}

func currentPrintOptions() PrintOptions {
	printMu.Lock()
	defer printMu.Unlock()
	return printOpts
}

// String formats the values as NumPy's str(): nested brackets, columns
// aligned, floats with up to 8 digits (scientific notation when the
// magnitudes call for it), arrays over 1000 elements summarised with
// "...". A failed array prints its error.
func (a *Array) String() string { return a.format(currentPrintOptions()) }

// Format implements fmt.Formatter: %v and %s print as String, %.3v with 3
// digits, %#v as NumPy's repr (array([...], dtype=float32)).
func (a *Array) Format(f fmt.State, verb rune) {
	o := currentPrintOptions()
	if p, ok := f.Precision(); ok {
		o.Precision = p
	}
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, a.repr(o))
	case verb == 'v' || verb == 's':
		fmt.Fprint(f, a.format(o))
	default:
		fmt.Fprintf(f, "%%!%c(*array.Array)", verb)
	}
}

func (a *Array) repr(o PrintOptions) string {
	h, err := a.printData()
	if err != nil {
		return fmt.Sprintf("array(<error: %v>)", err)
	}
	o.LineWidth -= len("array(")
	s := formatHost(h, a.shape, o, " "+strings.Repeat(" ", len("array(")))
	return "array(" + s + ", dtype=" + a.dt.String() + ")"
}

func (a *Array) format(o PrintOptions) string {
	h, err := a.printData()
	if err != nil {
		return fmt.Sprintf("<error: %v>", err)
	}
	return formatHost(h, a.shape, o, " ")
}

// formatHost formats row-major host data of a shape.
func formatHost(h any, shape []int, o PrintOptions, nextPrefix string) string {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n == 0 && len(shape) > 0 {
		return "[]"
	}
	summary := n > o.Threshold
	strides := make([]int, len(shape))
	st := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = st
		st *= shape[i]
	}
	// The elements shown, to size the columns.
	var shown []int
	var collect func(axis, off int)
	collect = func(axis, off int) {
		if axis == len(shape) {
			shown = append(shown, off)
			return
		}
		for _, i := range axisItems(shape[axis], summary, o.EdgeItems) {
			if i >= 0 {
				collect(axis+1, off+i*strides[axis])
			}
		}
	}
	collect(0, 0)
	ff := newElemFormatter(h, shown, o)
	if len(shape) == 0 {
		return strings.TrimLeft(ff(0), " ")
	}
	var rec func(axis, off int, indent string, width int) string
	rec = func(axis, off int, indent string, width int) string {
		left := len(shape) - axis
		items := axisItems(shape[axis], summary, o.EdgeItems)
		var s strings.Builder
		if left == 1 {
			elemWidth := width - 1
			line := indent
			for k, i := range items {
				var word string
				if i < 0 {
					word = "..."
				} else {
					word = ff(off + i*strides[axis])
				}
				if len(line)+len(word) > elemWidth && len(line) > len(indent) {
					s.WriteString(strings.TrimRight(line, " "))
					s.WriteByte('\n')
					line = indent
				}
				line += word
				if k < len(items)-1 {
					line += " "
				}
			}
			s.WriteString(line)
		} else {
			sep := strings.Repeat("\n", left-1)
			for k, i := range items {
				s.WriteString(indent)
				if i < 0 {
					s.WriteString("...")
				} else {
					s.WriteString(rec(axis+1, off+i*strides[axis], indent+" ", width-1))
				}
				if k < len(items)-1 {
					s.WriteString(sep)
				}
			}
		}
		return "[" + s.String()[len(indent):] + "]"
	}
	return rec(0, 0, nextPrefix, o.LineWidth)
}

// axisItems lists the positions shown along an axis; -1 marks "...".
func axisItems(n int, summary bool, edge int) []int {
	var out []int
	if summary && 2*edge < n {
		for i := 0; i < edge; i++ {
			out = append(out, i)
		}
		out = append(out, -1)
		for i := n - edge; i < n; i++ {
			out = append(out, i)
		}
		return out
	}
	for i := 0; i < n; i++ {
		out = append(out, i)
	}
	return out
}

// newElemFormatter returns a function formatting element i of h, padded so
// that all shown elements align.
func newElemFormatter(h any, shown []int, o PrintOptions) func(i int) string {
	switch d := h.(type) {
	case []bool:
		return func(i int) string {
			if d[i] {
				return " True"
			}
			return "False"
		}
	case []float32:
		return floatFormatter(func(i int) float64 { return float64(d[i]) }, bitsFmt(32), shown, o.Precision)
	case []float64:
		return floatFormatter(func(i int) float64 { return d[i] }, bitsFmt(64), shown, o.Precision)
	case []lowp.Float16:
		return floatFormatter(func(i int) float64 { return d[i].Float64() }, lowpFmt(Float16), shown, o.Precision)
	case []lowp.BFloat16:
		return floatFormatter(func(i int) float64 { return d[i].Float64() }, lowpFmt(BFloat16), shown, o.Precision)
	case []lowp.Float8E4M3:
		return floatFormatter(func(i int) float64 { return d[i].Float64() }, lowpFmt(Float8E4M3), shown, o.Precision)
	case []lowp.Float8E5M2:
		return floatFormatter(func(i int) float64 { return d[i].Float64() }, lowpFmt(Float8E5M2), shown, o.Precision)
	case []complex64:
		return complexFormatter(func(i int) complex128 { return complex128(d[i]) }, bitsFmt(32), shown, o.Precision)
	case []complex128:
		return complexFormatter(func(i int) complex128 { return d[i] }, bitsFmt(64), shown, o.Precision)
	}
	get := intGetter(h)
	w := 0
	for _, i := range shown {
		w = max(w, len(get(i)))
	}
	return func(i int) string {
		s := get(i)
		return strings.Repeat(" ", w-len(s)) + s
	}
}

// intGetter formats element i of an integer slice in decimal.
func intGetter(h any) func(int) string {
	switch d := h.(type) {
	case []uint8:
		return intString(d)
	case []int8:
		return intString(d)
	case []int16:
		return intString(d)
	case []uint16:
		return intString(d)
	case []int32:
		return intString(d)
	case []uint32:
		return intString(d)
	case []int64:
		return intString(d)
	case []uint64:
		return func(i int) string { return strconv.FormatUint(d[i], 10) }
	}
	return func(int) string { return "0" }
}

func intString[T ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64](d []T) func(int) string {
	return func(i int) string { return strconv.FormatInt(int64(d[i]), 10) }
}

// uniqueDigits formats v with the fewest digits that identify it, at most
// prec after the point, in 'f' or 'e' form; the result always has a '.'.
func uniqueDigits(v float64, ff floatFmt, format byte, prec int) string {
	s := ff(v, format, -1)
	mant, exp := s, ""
	if format == 'e' {
		k := strings.IndexByte(s, 'e')
		mant, exp = s[:k], s[k:]
	}
	dot := strings.IndexByte(mant, '.')
	if dot >= 0 && len(mant)-dot-1 > prec {
		s = ff(v, format, prec)
		mant, exp = s, ""
		if format == 'e' {
			k := strings.IndexByte(s, 'e')
			mant, exp = s[:k], s[k:]
		}
		mant = strings.TrimRight(mant, "0")
	}
	if !strings.Contains(mant, ".") {
		mant += "."
	}
	return mant + exp
}

func floatFormatter(get func(int) float64, ff floatFmt, shown []int, prec int) func(i int) string {
	var finite []float64
	for _, i := range shown {
		if v := get(i); !math.IsInf(v, 0) && !math.IsNaN(v) {
			finite = append(finite, v)
		}
	}
	exp := false
	maxV, minV := 0.0, math.Inf(1)
	for _, v := range finite {
		if v != 0 {
			maxV = math.Max(maxV, math.Abs(v))
			minV = math.Min(minV, math.Abs(v))
		}
	}
	if maxV > 0 && (maxV >= 1e8 || minV < 1e-4 || maxV/minV > 1000) {
		exp = true
	}
	padLeft, padRight, expDigits := 0, 0, 0
	for _, v := range finite {
		if exp {
			s := uniqueDigits(v, ff, 'e', prec)
			k := strings.IndexByte(s, 'e')
			mant, e := s[:k], s[k+1:]
			dot := strings.IndexByte(mant, '.')
			padLeft = max(padLeft, dot)
			padRight = max(padRight, len(mant)-dot-1)
			expDigits = max(expDigits, len(e)-1)
		} else {
			s := uniqueDigits(v, ff, 'f', prec)
			dot := strings.IndexByte(s, '.')
			padLeft = max(padLeft, dot)
			padRight = max(padRight, len(s)-dot-1)
		}
	}
	if exp {
		// Every element gets the same number of mantissa digits.
		fracPad := padRight
		padRight = expDigits + 2 + fracPad
		if len(finite) < len(shown) {
			hasNegInf := false
			for _, i := range shown {
				if v := get(i); math.IsInf(v, -1) {
					hasNegInf = true
				}
			}
			inf := 3
			if hasNegInf {
				inf = 4
			}
			padLeft = max(padLeft, 3-(padRight+1), inf-(padRight+1))
		}
		return func(i int) string {
			v := get(i)
			if s, ok := nonFinite(v); ok {
				return strings.Repeat(" ", max(0, padLeft+padRight+1-len(s))) + s
			}
			// Like NumPy, the extra digits are the value's own, not zeros.
			s := ff(v, 'e', fracPad)
			k := strings.IndexByte(s, 'e')
			mant, e := s[:k], s[k+1:]
			if !strings.Contains(mant, ".") {
				mant += "."
			}
			dot := strings.IndexByte(mant, '.')
			sign := e[0]
			digits := e[1:]
			for len(digits) < expDigits {
				digits = "0" + digits
			}
			return strings.Repeat(" ", max(0, padLeft-dot)) + mant + "e" + string(sign) + digits
		}
	}
	if len(finite) < len(shown) {
		hasNegInf := false
		for _, i := range shown {
			if v := get(i); math.IsInf(v, -1) {
				hasNegInf = true
			}
		}
		inf := 3
		if hasNegInf {
			inf = 4
		}
		padLeft = max(padLeft, 3-(padRight+1), inf-(padRight+1))
	}
	return func(i int) string {
		v := get(i)
		if s, ok := nonFinite(v); ok {
			return strings.Repeat(" ", max(0, padLeft+padRight+1-len(s))) + s
		}
		s := uniqueDigits(v, ff, 'f', prec)
		dot := strings.IndexByte(s, '.')
		return strings.Repeat(" ", max(0, padLeft-dot)) + s + strings.Repeat(" ", max(0, padRight-(len(s)-dot-1)))
	}
}

func nonFinite(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		return "nan", true
	case math.IsInf(v, 1):
		return "inf", true
	case math.IsInf(v, -1):
		return "-inf", true
	}
	return "", false
}

// floatFmt formats v as strconv.FormatFloat(v, format, prec, ...) does,
// prec -1 giving the fewest digits that identify v in its own format.
type floatFmt func(v float64, format byte, prec int) string

// bitsFmt formats float32 (32) or float64 (64) values.
func bitsFmt(bits int) floatFmt {
	return func(v float64, format byte, prec int) string { return strconv.FormatFloat(v, format, prec, bits) }
}

// lowpFmt formats values of a low-precision float dtype: the shortest
// digits are the fewest that round back (lowp's rounding) to the same
// value, as NumPy prints float16; a fixed precision shows the value's own
// digits.
func lowpFmt(dt DType) floatFmt {
	return func(v float64, format byte, prec int) string {
		if prec >= 0 || math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
			if prec < 0 {
				return strconv.FormatFloat(v, format, -1, 32)
			}
			return strconv.FormatFloat(v, format, prec, 64)
		}
		for n := 1; n < 17; n++ {
			s := strconv.FormatFloat(v, 'e', n-1, 64)
			back, err := strconv.ParseFloat(s, 64)
			if err != nil || roundLowp(back, dt) != v {
				continue
			}
			if format == 'e' {
				return s
			}
			// The same digits in positional notation.
			k := strings.IndexByte(s, 'e')
			exp, _ := strconv.Atoi(s[k+1:])
			digits := strings.Replace(strings.TrimPrefix(s[:k], "-"), ".", "", 1)
			return strconv.FormatFloat(v, 'f', max(0, len(digits)-1-exp), 64)
		}
		return strconv.FormatFloat(v, format, -1, 64)
	}
}
