package array

import "github.com/gocu-dev/gocu/array/internal/backend"

// OpMethods returns the array methods of the op table's operations, by
// gradient decision, for TestOpGradDecisions.
func OpMethods() (rule, zero, none []string) {
	for _, o := range backend.AllOps() {
		in := backend.Ops[o]
		switch {
		case in.Kind == backend.KindLeaf:
		case in.Grad == backend.GradRule:
			rule = append(rule, in.Method)
		case in.Grad == backend.GradZero:
			zero = append(zero, in.Method)
		default:
			none = append(none, in.Method)
		}
	}
	return rule, zero, none
}
