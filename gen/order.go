package gen

import (
	"go/ast"
	"go/constant"
	"go/token"
)

var constOne = constant.MakeInt64(1)

// checkOrder rejects a statement in which two calls with side effects (or
// one with side effects and one that reads memory) are unsequenced in C++:
// Go evaluates calls left to right, C++ leaves the order of operands and
// arguments open, so the kernel could compute something else on the GPU.
// Calls on the two sides of && and || are sequenced, as are a call and its
// arguments.
func (fc *fnCtx) checkOrder(s ast.Stmt) {
	switch s.(type) {
	case *ast.BlockStmt, *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.LabeledStmt,
		*ast.TypeSwitchStmt, *ast.SelectStmt:
		// Their expressions are checked where they are translated, and
		// their bodies statement by statement.
		fc.checkOrderHead(s)
		return
	}
	fc.checkOrderNode(s)
}

func (fc *fnCtx) checkOrderHead(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.IfStmt:
		fc.checkOrderNode(s.Cond)
	case *ast.ForStmt:
		if s.Cond != nil {
			fc.checkOrderNode(s.Cond)
		}
	case *ast.RangeStmt:
		fc.checkOrderNode(s.X)
	case *ast.SwitchStmt:
		if s.Tag != nil {
			fc.checkOrderNode(s.Tag)
		}
		for _, st := range s.Body.List {
			for _, e := range st.(*ast.CaseClause).List {
				fc.checkOrderNode(e)
			}
		}
	}
}

// callEffect classifies a call: 2 for side effects, 1 for memory reads, 0
// for neither.
func (fc *fnCtx) callEffect(c *ast.CallExpr) int {
	callee, ok := fc.calleeOf(c)
	if !ok || callee.Pkg() == nil {
		return 0
	}
	if isPrint(callee) {
		return 2
	}
	if callee.Pkg().Path() == kernelPath {
		switch callee.Name() {
		case "AtomicAdd", "AtomicSub", "AtomicMax", "AtomicMin", "AtomicExch", "AtomicCAS",
			"SyncThreads", "SyncThreadsCount", "SyncThreadsAnd", "SyncThreadsOr", "ThreadFence",
			"CpAsync", "CpAsyncZfill", "CpAsyncCommit", "CpAsyncWait", "MMABF16", "MMAF16", "MMATF32",
			"LdMatrixX1", "LdMatrixX2", "LdMatrixX4", "LdMatrixX1Trans", "LdMatrixX2Trans", "LdMatrixX4Trans",
			"BarSync", "BarArrive", "SetMaxNReg",
			"MBarInit", "MBarArrive", "MBarArriveExpectTx", "MBarWait", "CpAsyncBulk":
			return 2
		}
		return 0
	}
	g := fc.calleeFn(c, callee)
	if g == nil {
		return 0
	}
	switch {
	case g.eff.writes || g.eff.barrier || g.eff.atomic:
		return 2
	case g.eff.reads:
		return 1
	}
	return 0
}

type effCall struct {
	call *ast.CallExpr
	eff  int
}

// checkOrderNode walks n and reports the first unsequenced conflict.
func (fc *fnCtx) checkOrderNode(n ast.Node) {
	var walk func(n ast.Node) []effCall
	reported := false
	conflict := func(a, b []effCall) {
		if reported {
			return
		}
		for _, x := range a {
			for _, y := range b {
				if x.eff == 2 && y.eff >= 1 || y.eff == 2 && x.eff >= 1 {
					first, second := x.call, y.call
					if second.Pos() < first.Pos() {
						first, second = second, first
					}
					fc.u.unsupported(second.Pos(), "calling "+fc.u.nodeText(first.Fun)+" and "+fc.u.nodeText(second.Fun)+" in one statement when one of them has side effects",
						"CUDA C does not fix the order of the two calls; assign the result of the first to a variable first")
					reported = true
					return
				}
			}
		}
	}
	walk = func(n ast.Node) []effCall {
		if n == nil {
			return nil
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return nil
		case *ast.BinaryExpr:
			l, r := walk(x.X), walk(x.Y)
			if x.Op != token.LAND && x.Op != token.LOR {
				conflict(l, r)
			}
			return append(l, r...)
		case *ast.CallExpr:
			var all []effCall
			var parts [][]effCall
			parts = append(parts, walk(x.Fun))
			for _, a := range x.Args {
				parts = append(parts, walk(a))
			}
			for i := range parts {
				for j := i + 1; j < len(parts); j++ {
					conflict(parts[i], parts[j])
				}
				all = append(all, parts[i]...)
			}
			if e := fc.callEffect(x); e > 0 {
				all = append(all, effCall{x, e})
			}
			return all
		}
		// Any other node: its children are mutually unsequenced.
		var parts [][]effCall
		ast.Inspect(n, func(c ast.Node) bool {
			if c == n {
				return true
			}
			if c != nil {
				parts = append(parts, walk(c))
			}
			return false
		})
		var all []effCall
		for i := range parts {
			for j := i + 1; j < len(parts); j++ {
				conflict(parts[i], parts[j])
			}
			all = append(all, parts[i]...)
		}
		return all
	}
	walk(n)
}
