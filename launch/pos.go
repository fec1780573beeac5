package launch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu/kernel"
)

// siteCalls are the checks and helpers of the generated CUDA source whose
// last argument is a site id, an index into meta.Module.Sites.
var siteCalls = []string{"GOCU_AT", "GOCU_AI", "GOCU_SHCNT", "gocu_div", "gocu_rem", "gocu_reinterpret", "gocu_reslice"}

// goPositions names the Go source of line (1-based) of a generated CUDA
// source: the positions of the checked accesses on it, from the site table,
// and the Go function it belongs to, from the comment gocu gen writes above
// every function ("// pkg.Func (file.go:12)").
func goPositions(lines []string, line int, sites []*kernel.Site) string {
	if line < 1 || line > len(lines) {
		return ""
	}
	var parts []string
	seen := map[int]bool{}
	for _, id := range siteIDs(lines[line-1]) {
		if id < 0 || id >= len(sites) || seen[id] || sites[id] == nil {
			continue
		}
		seen[id] = true
		s := sites[id]
		p := fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)
		if s.Expr != "" {
			p += " (" + s.Expr + ")"
		}
		parts = append(parts, p)
	}
	fn := ""
	for i := line - 1; i >= 0; i-- {
		l := lines[i]
		if strings.HasPrefix(l, "// ") && strings.HasSuffix(l, ")") && strings.Contains(l, " (") && !strings.Contains(l, "----") {
			fn = l[len("// "):]
			break
		}
		if strings.HasPrefix(l, "// ---- end of gocu runtime") {
			break
		}
	}
	switch {
	case len(parts) > 0 && fn != "":
		return strings.Join(parts, ", ") + " in " + fn
	case len(parts) > 0:
		return strings.Join(parts, ", ")
	}
	return fn
}

// siteIDs returns the site ids of the checks on one line of generated CUDA:
// the last argument of every call to one of siteCalls.
func siteIDs(l string) []int {
	var ids []int
	for _, name := range siteCalls {
		for from := 0; ; {
			i := strings.Index(l[from:], name)
			if i < 0 {
				break
			}
			j := from + i + len(name)
			from = j
			if j < len(l) && l[j] == '<' { // template arguments
				depth := 0
				for ; j < len(l); j++ {
					if l[j] == '<' {
						depth++
					} else if l[j] == '>' {
						if depth--; depth == 0 {
							j++
							break
						}
					}
				}
			}
			if j >= len(l) || l[j] != '(' {
				continue
			}
			depth, last := 0, j+1
			end := -1
			for k := j; k < len(l); k++ {
				switch l[k] {
				case '(':
					depth++
				case ')':
					depth--
					if depth == 0 {
						end = k
					}
				case ',':
					if depth == 1 {
						last = k + 1
					}
				}
				if end >= 0 {
					break
				}
			}
			if end < 0 {
				continue
			}
			if id, err := strconv.Atoi(strings.TrimSpace(l[last:end])); err == nil {
				ids = append(ids, id)
			}
		}
	}
	return ids
}
