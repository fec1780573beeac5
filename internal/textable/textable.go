// Package textable writes the plain-text tables that gocu bench and the
// profiler print.
package textable

import "strings"

// Write writes t, whose first row is the header, to b: the first left
// columns aligned left and the others right, two spaces between columns, a
// rule under the header, and no trailing spaces.
func Write(b *strings.Builder, t [][]string, left int) {
	if len(t) == 0 {
		return
	}
	width := make([]int, len(t[0]))
	for _, row := range t {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	for r, row := range t {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if i < left {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		if r == 0 {
			n := 2 * (len(width) - 1)
			for _, w := range width {
				n += w
			}
			b.WriteString(strings.Repeat("-", n) + "\n")
		}
	}
}
