package backend

import "testing"

// TestOpTable checks that every operation's row is complete: a name, an
// arity that fits its kind, dtypes, a gradient decision, and a CPU
// function for the float-only ones. The CPU and CUDA cases are checked
// by the cpu and cudagen tests, which run every row of the table.
func TestOpTable(t *testing.T) {
	names := map[string]Op{}
	for _, o := range AllOps() {
		in := Ops[o]
		if in.Name == "" {
			t.Errorf("op %d has no row in Ops", o)
			continue
		}
		if p, dup := names[in.Name]; dup {
			t.Errorf("%v and op %d share the name %q", p, o, in.Name)
		}
		names[in.Name] = o
		want := map[Kind][]int{KindLeaf: {0}, KindCast: {1}, KindSelect: {3}, KindPredicate: {1}}[in.Kind]
		if want == nil {
			want = []int{1, 2}
		}
		if in.Kind == KindNone || (in.Arity != want[0] && in.Arity != want[len(want)-1]) {
			t.Errorf("%v: kind %d with arity %d", o, in.Kind, in.Arity)
		}
		if in.Kind == KindLeaf {
			continue
		}
		if in.Method == "" || in.DTypes == 0 {
			t.Errorf("%v: no method or no dtypes", o)
		}
		if in.Grad == GradUndecided {
			t.Errorf("%v: no gradient decision (GradRule, GradZero or GradNone)", o)
		}
		if in.Kind == KindFloat && (in.Arity == 1 && in.F == nil || in.Arity == 2 && in.F2 == nil) {
			t.Errorf("%v: a float operation without its CPU function", o)
		}
		if (in.F != nil && in.Arity != 1) || (in.F2 != nil && in.Arity != 2) {
			t.Errorf("%v: CPU function of the wrong arity", o)
		}
		if b := in.OnBool; b != 0 && (b.Kind() != KindLogical || b.Arity() != in.Arity || in.DTypes.Has(Bool)) {
			t.Errorf("%v: on bool it becomes %v, not a logical operation of its arity", o, b)
		}
		for _, d := range DTypes {
			if in.DTypes.Has(d) && d.IsStorage() {
				t.Errorf("%v: storage dtype %v in its dtypes", o, d)
			}
		}
	}
	if len(UnaryOps)+len(BinaryOps)+4 != len(AllOps()) {
		t.Errorf("%d unary and %d binary ops of %d", len(UnaryOps), len(BinaryOps), len(AllOps()))
	}
}
