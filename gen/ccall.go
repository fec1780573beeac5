package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// kernelMath maps the kernel package's float32 math to CUDA.
var kernelMath = map[string]string{
	"Sqrt": "sqrtf", "Rsqrt": "rsqrtf", "Cbrt": "cbrtf", "Exp": "expf", "Exp2": "exp2f", "FastExp2": "gocu_fast_exp2", "Expm1": "expm1f",
	"Log": "logf", "Log2": "log2f", "Log10": "log10f", "Log1p": "log1pf", "Sin": "sinf", "Cos": "cosf",
	"Tan": "tanf", "Asin": "asinf", "Acos": "acosf", "Atan": "atanf", "Sinh": "sinhf", "Cosh": "coshf",
	"Tanh": "tanhf", "Erf": "erff", "Floor": "floorf", "Ceil": "ceilf", "Trunc": "truncf", "Round": "roundf",
	"Abs": "fabsf", "Atan2": "atan2f", "Pow": "powf", "Mod": "fmodf", "FMA": "fmaf",
	"Min": "gocu_fmin", "Max": "gocu_fmax", "IsNaN": "gocu_isnan_f32", "IsInf": "gocu_isinf_f32",
}

// goMath maps Go's math package (float64) to CUDA.
var goMath = map[string]string{
	"Sqrt": "sqrt", "Cbrt": "cbrt", "Exp": "exp", "Exp2": "exp2", "Expm1": "expm1", "Log": "log",
	"Log2": "log2", "Log10": "log10", "Log1p": "log1p", "Sin": "sin", "Cos": "cos", "Tan": "tan",
	"Asin": "asin", "Acos": "acos", "Atan": "atan", "Atan2": "atan2", "Sinh": "sinh", "Cosh": "cosh",
	"Tanh": "tanh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh", "Erf": "erf", "Erfc": "erfc",
	"Erfinv": "erfinv", "Gamma": "tgamma", "Floor": "floor", "Ceil": "ceil", "Trunc": "trunc",
	"Round": "round", "RoundToEven": "rint", "Abs": "fabs", "Pow": "pow", "Mod": "fmod",
	"Remainder": "remainder", "Hypot": "hypot", "FMA": "fma", "Copysign": "copysign",
	"Max": "gocu_math_max", "Min": "gocu_math_min", "Dim": "gocu_math_dim", "IsNaN": "gocu_isnan_f64",
	"Nextafter": "nextafter", "Nextafter32": "nextafterf", "Float32bits": "__float_as_uint",
	"Float32frombits": "__uint_as_float",
}

// pureKernelFunc lists the kernel package's functions without effects on
// memory.
var pureKernelFunc = map[string]bool{
	"Index": true, "Index2D": true, "Stride": true, "Stride2D": true, "Rank": true, "LaneID": true,
	"WarpID": true, "Size": true, "Reinterpret": true, "DynamicShared": true,
	"ToHalf": true, "ToBFloat16": true, "ToFP8E4M3": true, "ToFP8E5M2": true, "ToHalf2": true, "ToBFloat16x2": true,
	"PackHalf2": true, "PackBFloat16x2": true, "Half2FromBits": true, "BFloat16x2FromBits": true, "ToTF32": true,
	"ShflSync": true, "ShflUp": true, "ShflDown": true, "ShflXor": true, "Ballot": true, "Any": true, "All": true,
}

func init() {
	for k := range kernelMath {
		pureKernelFunc[k] = true
	}
}

func (fc *fnCtx) calleeOf(c *ast.CallExpr) (*types.Func, bool) {
	f, ok := typeutil.Callee(fc.info, c).(*types.Func)
	return f, ok
}

// call translates a single-valued call.
func (fc *fnCtx) call(c *ast.CallExpr) cx {
	fc.pos = c.Pos()
	if tv := fc.info.Types[c.Fun]; tv.IsType() {
		return fc.conversion(c, tv.Type)
	}
	if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok {
		if b, ok := fc.info.Uses[id].(*types.Builtin); ok {
			return fc.builtin(c, b.Name())
		}
	}
	if callee, ok := fc.calleeOf(c); ok && isPrint(callee) {
		return fc.voidCall(c) // its results are never used
	}
	if t, ok := fc.typeOf(c).(*types.Tuple); ok && t.Len() != 1 {
		if t.Len() == 0 {
			return fc.voidCall(c)
		}
		fc.unsupported(c.Pos(), "using a call with several results as a value", "assign the results to variables first")
		return prim("0")
	}
	return fc.voidCall(c)
}

// voidCall translates a call of a function (with zero or one result).
func (fc *fnCtx) voidCall(c *ast.CallExpr) cx {
	callee, ok := fc.calleeOf(c)
	if !ok {
		if _, isLit := ast.Unparen(c.Fun).(*ast.FuncLit); isLit {
			fc.unsupported(c.Pos(), "a function literal (closure)", "write a named function and call it")
		} else {
			fc.unsupported(c.Pos(), "calling a function value", "call the function directly")
		}
		return prim("0")
	}
	if callee.Pkg() != nil {
		switch callee.Pkg().Path() {
		case kernelPath:
			return fc.kernelCall(c, callee)
		case "math":
			return fc.mathCall(c, callee)
		case "math/bits":
			return fc.bitsCall(c, callee)
		case lowpPath:
			return fc.lowpCall(c, callee)
		case "fmt":
			return fc.fmtCall(c, callee)
		}
	}
	return fc.deviceCall(c, callee)
}

// conversion translates T(x). An explicit conversion of a float product to
// its own type rounds the product, which forbids fusing it into an FMA, as
// the Go specification says; __fmul_rn does exactly that in CUDA.
func (fc *fnCtx) conversion(c *ast.CallExpr, to types.Type) cx {
	if len(c.Args) != 1 {
		fc.u.errorf(c.Pos(), "conversion needs one argument")
		return prim("0")
	}
	arg := c.Args[0]
	from := fc.typeOf(arg)
	if tv := fc.info.Types[arg]; tv.Value != nil && basicOf(to) != nil && basicOf(from) != nil {
		// A constant converted to a type parameter's type (T(1) in a
		// generic function), which Go does not fold: exact in the type.
		if tb := basicOf(to); tb.Info()&(types.IsNumeric|types.IsBoolean) != 0 && tb.Info()&types.IsComplex == 0 && lowpKind(to) == "" {
			return fc.u.constLit(tv.Value, to, c.Pos())
		}
	}
	if b, ok := ast.Unparen(arg).(*ast.BinaryExpr); ok && b.Op == token.MUL && isFloat(from) && isFloat(to) && bits(from) == bits(to) {
		if tv := fc.info.Types[arg]; tv.Value == nil {
			x, y := fc.val(b.X), fc.val(b.Y)
			if bits(to) == 32 {
				return callx("__fmul_rn", x, y)
			}
			return callx("__dmul_rn", x, y)
		}
	}
	if _, ok := to.Underlying().(*types.Slice); ok {
		if _, ok := from.Underlying().(*types.Slice); !ok {
			fc.unsupported(c.Pos(), "converting "+from.String()+" to a slice", "use kernel.Reinterpret to view memory as another type")
			return prim("0")
		}
	}
	if _, ok := to.Underlying().(*types.Array); ok {
		if _, ok := from.Underlying().(*types.Slice); ok {
			fc.unsupported(c.Pos(), "converting a slice to an array", "copy the elements in a loop")
			return prim("0")
		}
	}
	if p, ok := to.Underlying().(*types.Pointer); ok {
		_ = p
		fc.unsupported(c.Pos(), "converting to a pointer type", "use slices")
		return prim("0")
	}
	x := fc.expr(arg)
	fc.pos = c.Pos() // a conversion it rejects is reported here, not at the argument's last part
	return fc.convert(x, from, to)
}

func (fc *fnCtx) builtin(c *ast.CallExpr, name string) cx {
	switch name {
	case "len":
		t := fc.typeOf(c.Args[0])
		if _, ok := t.Underlying().(*types.Slice); ok {
			x := fc.val(c.Args[0])
			return cx{s: x.at(precPostfix) + ".n", prec: precPostfix}
		}
		fc.unsupported(c.Pos(), "len of "+t.String(), "take len of slices and arrays")
	case "cap":
		fc.unsupported(c.Pos(), "cap", "GPU slices carry only their length; use len")
	case "min", "max":
		t := fc.typeOf(c)
		var fnName string
		switch {
		case isFloat32(t):
			fnName = "gocu_" + name + "_f32"
		case isFloat(t):
			fnName = "gocu_" + name + "_f64"
		case classOf(t) != notInt:
			fnName = "gocu_" + name + "<" + fc.ctype(t) + ">"
		default:
			fc.unsupported(c.Pos(), name+" of "+t.String(), "use min and max on numbers")
			return prim("0")
		}
		acc := fc.valAs(c.Args[0], t)
		for _, a := range c.Args[1:] {
			acc = callx(fnName, acc, fc.valAs(a, t))
		}
		return acc
	case "new", "make", "append":
		if len(c.Args) > 0 {
			if _, ok := fc.typeOf(c.Args[0]).Underlying().(*types.Chan); ok && name == "make" {
				fc.unsupported(c.Pos(), "a channel", "communicate through shared memory and SyncThreads")
				return prim("0")
			}
		}
		fc.unsupported(c.Pos(), name+" (it allocates memory)", "pass buffers in as slice parameters, or use fixed-size arrays and kernel.Shared")
	case "copy":
		fc.unsupported(c.Pos(), "copy", "copy the elements in a loop")
	case "panic":
		fc.unsupported(c.Pos(), "panic", "write an error code into an output slice and return")
	case "print", "println":
		fc.unsupported(c.Pos(), name, "use fmt.Printf, fmt.Println or kernel.Printf, which print on the GPU and, ordered by block and thread, on the simulator")
	case "recover":
		fc.unsupported(c.Pos(), "recover", "kernels cannot panic; check values explicitly")
	case "delete", "clear":
		fc.unsupported(c.Pos(), name, "use slices and fixed-size arrays")
	case "close":
		fc.unsupported(c.Pos(), "close (channels)", "communicate through shared memory and SyncThreads")
	case "complex", "real", "imag":
		fc.unsupported(c.Pos(), "complex numbers", "use pairs of floats (kernel.Float2)")
	default:
		fc.unsupported(c.Pos(), "the builtin "+name, "use the Go subset described in package gen")
	}
	return prim("0")
}

// threadMethod translates the methods of *kernel.Thread.
func (fc *fnCtx) threadMethod(c *ast.CallExpr, name string) cx {
	arg := func(i int) cx { return fc.val(c.Args[i]) }
	rank := cx{s: "threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y", prec: precAdd, uns: true}
	switch name {
	case "Index":
		return cx{s: "blockIdx.x * blockDim.x + threadIdx.x", prec: precAdd, uns: true}
	case "Stride":
		return cx{s: "blockDim.x * gridDim.x", prec: precMul, uns: true}
	case "Rank":
		return rank
	case "LaneID":
		// Lanes are numbered by rank within the block, so %laneid is
		// Rank() % 32.
		return prim("gocu_laneid()")
	case "WarpID":
		return cx{s: "(" + rank.s + ") / 32u", prec: precMul, uns: true}
	case "SyncThreads":
		fc.eff.barrier = true
		return prim("__syncthreads()")
	case "SyncThreadsCount":
		fc.eff.barrier = true
		return callx("__syncthreads_count", arg(0))
	case "SyncThreadsAnd":
		fc.eff.barrier = true
		return cx{s: callx("__syncthreads_and", arg(0)).s + " != 0", prec: precEq}
	case "SyncThreadsOr":
		fc.eff.barrier = true
		return cx{s: callx("__syncthreads_or", arg(0)).s + " != 0", prec: precEq}
	case "SyncWarp":
		fc.eff.warp = true
		return callx("__syncwarp", arg(0))
	case "ThreadFence":
		return prim("__threadfence()")
	case "Ballot":
		fc.eff.warp = true
		return callx("__ballot_sync", arg(0), arg(1))
	case "Any":
		fc.eff.warp = true
		return cx{s: callx("__any_sync", arg(0), arg(1)).s + " != 0", prec: precEq}
	case "All":
		fc.eff.warp = true
		return cx{s: callx("__all_sync", arg(0), arg(1)).s + " != 0", prec: precEq}
	case "Index2D", "Stride2D":
		fc.unsupported(c.Pos(), "using "+name+" as a single value", "assign both results: x, y := t."+name+"()")
		return prim("0")
	}
	fc.unsupported(c.Pos(), "the Thread method "+name, "see package kernel for what kernels can call")
	return prim("0")
}

// multi translates a call with several results into one C expression per
// result; setup holds statements that must run first (the call itself, for
// a device function returning a tuple).
func (fc *fnCtx) multi(c *ast.CallExpr) (vals []cx, setup []string, ok bool) {
	callee, isF := fc.calleeOf(c)
	if !isF {
		return nil, nil, false
	}
	if callee.Pkg() != nil && callee.Pkg().Path() == kernelPath {
		switch callee.Name() {
		case "Index2D":
			return []cx{
				{s: "blockIdx.x * blockDim.x + threadIdx.x", prec: precAdd, uns: true},
				{s: "blockIdx.y * blockDim.y + threadIdx.y", prec: precAdd, uns: true},
			}, nil, true
		case "Stride2D":
			return []cx{
				{s: "blockDim.x * gridDim.x", prec: precMul, uns: true},
				{s: "blockDim.y * gridDim.y", prec: precMul, uns: true},
			}, nil, true
		}
		return nil, nil, false
	}
	g := fc.calleeFn(c, callee)
	if g == nil {
		return nil, nil, false
	}
	res := g.sig.Results()
	if res.Len() < 2 {
		return nil, nil, false
	}
	call := fc.deviceCall(c, callee)
	tmp := fc.names.takeInternal("gocu_r")
	setup = append(setup, fmt.Sprintf("%s %s = %s;", fc.u.tupleFor(res, c.Pos()).name, tmp, call.s))
	for i := 0; i < res.Len(); i++ {
		vals = append(vals, prim(fmt.Sprintf("%s.r%d", tmp, i)))
	}
	return vals, setup, true
}

// kernelCall translates calls into package kernel.
func (fc *fnCtx) kernelCall(c *ast.CallExpr, callee *types.Func) cx {
	name := callee.Name()
	if recv := callee.Signature().Recv(); recv != nil {
		if isThreadPtr(recv.Type()) {
			return fc.threadMethod(c, name)
		}
		if x, ok := fc.tensorMethod(c, recv.Type(), name); ok {
			return x
		}
		if isKernelNamed(recv.Type(), "Dim3") && name == "Size" {
			sel := c.Fun.(*ast.SelectorExpr)
			if !fc.pure(sel.X) {
				fc.unsupported(c.Pos(), "Size of an expression with calls", "assign the Dim3 to a variable first")
			}
			d := fc.val(sel.X).at(precPostfix)
			return cx{s: fmt.Sprintf("(unsigned long long)(long long)%s.X * (unsigned long long)(long long)%s.Y * (unsigned long long)(long long)%s.Z", d, d, d), prec: precMul, uns: true}
		}
		fc.unsupported(c.Pos(), "the method "+funcDisplayName(callee), "see package kernel for what kernels can call")
		return prim("0")
	}
	args := func(from int) []cx {
		var xs []cx
		sig := callee.Signature()
		inst := fc.instance(c)
		for i := from; i < len(c.Args); i++ {
			pt := sig.Params().At(i).Type()
			if inst != nil {
				pt = inst.Params().At(i).Type()
			}
			xs = append(xs, fc.valAs(c.Args[i], pt))
		}
		return xs
	}
	if m, ok := kernelMath[name]; ok {
		return callx(m, args(0)...)
	}
	if x, ok := fc.tensorCall(c, name, args); ok {
		return x
	}
	switch name {
	case "ShflSync", "ShflUp", "ShflDown", "ShflXor":
		fc.eff.warp = true
		cname := map[string]string{"ShflSync": "__shfl_sync", "ShflUp": "__shfl_up_sync", "ShflDown": "__shfl_down_sync", "ShflXor": "__shfl_xor_sync"}[name]
		return callx(cname, args(1)...)
	case "AtomicAdd", "AtomicSub", "AtomicMax", "AtomicMin", "AtomicExch", "AtomicCAS":
		return fc.atomic(c, name)
	case "Reinterpret":
		targs := fc.typeArgs(c)
		if len(targs) != 2 {
			fc.u.errorf(c.Pos(), "gocu gen: internal error: Reinterpret without type arguments")
			return prim("0")
		}
		s := fc.val(c.Args[0])
		return callx(fmt.Sprintf("gocu_reinterpret<%s, %s>", fc.ctype(targs[0]), fc.ctype(targs[1])), s, prim(fmt.Sprint(fc.u.site(c, fc.f))))
	case "DynamicShared":
		targs := fc.typeArgs(c)
		if len(targs) != 1 {
			fc.u.errorf(c.Pos(), "gocu gen: internal error: DynamicShared without type argument")
			return prim("0")
		}
		fc.u.dynShared = true
		fc.f.dynShared = true
		fc.eff.shared = true
		ct := fc.ctype(targs[0])
		return prim(fmt.Sprintf("gocu_slice<%s>{(%s*)gocu_dynsmem, (long long)(gocu_dynsmem_size() / sizeof(%s))}", ct, ct, ct))
	case "Printf":
		if len(c.Args) < 2 {
			return prim("0")
		}
		return fc.printCall(c, name, c.Args[1], c.Args[2:])
	case "Shared":
		fc.unsupported(c.Pos(), "kernel.Shared outside a declaration at the top of a kernel body", "declare it first in the kernel, as tile := kernel.Shared[[16][16]float32](t), and pass it to functions")
	case "At", "Index":
		fc.unsupported(c.Pos(), "kernel."+name+" in kernel code", "it is for code that gocu gen writes; index the slice directly")
	default:
		fc.unsupported(c.Pos(), "kernel."+name, "see package kernel for what kernels can call")
	}
	return prim("0")
}

// instance returns the instantiated signature of a generic call, with
// the type arguments of fc's instance in place.
func (fc *fnCtx) instance(c *ast.CallExpr) *types.Signature {
	id := calleeIdent(c.Fun)
	if id == nil {
		return nil
	}
	_, sig := fc.f.typeArgsOf(id)
	return sig
}

func (fc *fnCtx) typeArgs(c *ast.CallExpr) []types.Type {
	id := calleeIdent(c.Fun)
	if id == nil {
		return nil
	}
	ts, _ := fc.f.typeArgsOf(id)
	return ts
}

// calleeFn returns the function (the instance, for a generic one) that a
// call of the Go function callee reaches, or nil.
func (fc *fnCtx) calleeFn(c *ast.CallExpr, callee *types.Func) *fn {
	return fc.u.fns[keyOf(callee, fc.typeArgs(c))]
}

func calleeIdent(e ast.Expr) *ast.Ident {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return x
	case *ast.SelectorExpr:
		return x.Sel
	case *ast.IndexExpr:
		return calleeIdent(x.X)
	case *ast.IndexListExpr:
		return calleeIdent(x.X)
	}
	return nil
}

// nativeAtomic says for which C types CUDA itself has each atomic.
var nativeAtomic = map[string]map[string]bool{
	"AtomicAdd":  {"int": true, "unsigned int": true, "unsigned long long": true, "float": true, "double": true},
	"AtomicSub":  {"int": true, "unsigned int": true},
	"AtomicMax":  {"int": true, "unsigned int": true, "long long": true, "unsigned long long": true},
	"AtomicMin":  {"int": true, "unsigned int": true, "long long": true, "unsigned long long": true},
	"AtomicExch": {"int": true, "unsigned int": true, "unsigned long long": true, "float": true},
	"AtomicCAS":  {"int": true, "unsigned int": true, "unsigned long long": true},
}

// atomic translates kernel.AtomicX(&x[i], v...).
func (fc *fnCtx) atomic(c *ast.CallExpr, name string) cx {
	fc.eff.atomic = true
	fc.eff.writes = true
	fc.eff.reads = true
	if len(c.Args) == 0 {
		return prim("0")
	}
	ptr := fc.atomicTarget(c.Args[0])
	if ptr.s == "" {
		return prim("0")
	}
	elem := fc.typeOf(c.Args[0]).(*types.Pointer).Elem()
	ct := fc.ctype(elem)
	var vals []cx
	for _, a := range c.Args[1:] {
		vals = append(vals, fc.valAs(a, elem))
	}
	cname := "atomic" + strings.TrimPrefix(name, "Atomic")
	if !nativeAtomic[name][ct] {
		cname = "gocu_atomic_" + strings.ToLower(strings.TrimPrefix(name, "Atomic"))
	}
	return callx(cname, append([]cx{ptr}, vals...)...)
}

// atomicTarget translates the address argument of an atomic, which must be
// the address of an element of a slice or of a shared array.
func (fc *fnCtx) atomicTarget(e ast.Expr) cx {
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		fc.unsupported(e.Pos(), "an atomic on anything but &s[i]", "pass the address of a slice or shared-array element, such as &hist[bin]")
		return cx{}
	}
	target := ast.Unparen(u.X)
	root := target
	for {
		if sel, ok := root.(*ast.SelectorExpr); ok {
			root = ast.Unparen(sel.X)
			continue
		}
		break
	}
	ix, ok := root.(*ast.IndexExpr)
	if !ok {
		if id, isID := root.(*ast.Ident); isID && target != root {
			if _, isPtr := fc.typeOf(id).Underlying().(*types.Pointer); isPtr {
				// A field of a shared struct, or of a pointer receiver's
				// (which must point to shared or global memory).
				lv := fc.lvalue(target)
				return cx{s: "&" + lv.at(precUnary), prec: precUnary}
			}
		}
		fc.unsupported(e.Pos(), "an atomic on a variable", "atomics work on slice or shared-array elements, such as &hist[bin], and on fields of shared structs")
		return cx{}
	}
	if fc.noWriteTable(ix.X, "an atomic on") {
		return cx{}
	}
	if _, isSlice := fc.typeOf(ix.X).Underlying().(*types.Slice); !isSlice {
		if !fc.isSharedExpr(ix.X) {
			if _, isPtr := fc.typeOf(ix.X).Underlying().(*types.Pointer); !isPtr {
				fc.unsupported(e.Pos(), "an atomic on a local array", "local arrays are private to a thread; use a plain update, or a shared array")
				return cx{}
			}
		}
	}
	lv := fc.lvalue(target)
	return cx{s: "&" + lv.at(precUnary), prec: precUnary}
}

// deviceCall translates a call of a Go function of the module.
func (fc *fnCtx) deviceCall(c *ast.CallExpr, callee *types.Func) cx {
	g := fc.calleeFn(c, callee)
	if g == nil || g.cname == "" {
		switch {
		case g != nil || fc.u.quietCall(callee):
			// Its own problem was reported.
		case isInterfaceMethod(callee):
			fc.unsupported(c.Pos(), "calling an interface method", "use concrete types")
		default:
			fc.unsupported(c.Pos(), "calling "+funcDisplayName(callee), "kernels can call Go functions with bodies in your module, and the kernel, math and math/bits packages")
		}
		return prim("0")
	}
	sig := g.sig
	if sig.Variadic() {
		// Its declaration is reported too; its arguments do not match its
		// parameters one to one.
		fc.unsupported(c.Pos(), "calling the variadic function "+funcDisplayName(callee), "pass a fixed-size array or the values as separate parameters")
		return prim("0")
	}
	fc.eff.or(g.eff)
	var args []cx
	if sig.Recv() != nil {
		sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
		if !ok {
			fc.unsupported(c.Pos(), "a method expression", "call the method on a value")
			return prim("0")
		}
		args = append(args, fc.recvArg(sel.X, sig.Recv().Type()))
	}
	for i, a := range c.Args {
		if i == 0 && g.thread != nil {
			continue
		}
		args = append(args, fc.valAs(a, sig.Params().At(i).Type()))
	}
	return callx(g.cname, args...)
}

// recvArg translates the receiver x of a method call whose receiver
// type is rt: Go takes the address of an addressable value for a pointer
// receiver, and dereferences a pointer for a value receiver.
func (fc *fnCtx) recvArg(x ast.Expr, rt types.Type) cx {
	_, wantPtr := rt.Underlying().(*types.Pointer)
	_, havePtr := fc.typeOf(x).Underlying().(*types.Pointer)
	switch {
	case wantPtr && !havePtr:
		if fc.noWriteTable(x, "calling a pointer-receiver method on") {
			return prim("0")
		}
		lv := fc.lvalue(x)
		return cx{s: "&" + lv.at(precUnary), prec: precUnary}
	case !wantPtr && havePtr:
		return fc.structBase(x, false)
	}
	return fc.valAs(x, rt)
}

// mathCall translates calls into Go's math package (float64).
func (fc *fnCtx) mathCall(c *ast.CallExpr, callee *types.Func) cx {
	name := callee.Name()
	sig := callee.Signature()
	var args []cx
	for i, a := range c.Args {
		if i < sig.Params().Len() {
			args = append(args, fc.valAs(a, sig.Params().At(i).Type()))
		}
	}
	switch name {
	case "IsInf":
		return callx("gocu_math_isinf", args[0], cast("long long", args[1]))
	case "Inf":
		return callx("gocu_math_inf", cast("long long", args[0]))
	case "NaN":
		return prim("__longlong_as_double(0x7ff8000000000001ll)")
	case "Signbit":
		return cx{s: callx("__double_as_longlong", args[0]).s + " < 0", prec: precRel}
	case "Float64bits":
		return cast("unsigned long long", callx("__double_as_longlong", args[0]))
	case "Float64frombits":
		return callx("__longlong_as_double", cast("long long", args[0]))
	}
	if m, ok := goMath[name]; ok {
		return callx(m, args...)
	}
	fc.unsupported(c.Pos(), "math."+name, "use the math functions CUDA provides (Sqrt, Exp, Log, Sin, Pow, FMA, ...)")
	return prim("0")
}

// bitsCall translates calls into math/bits to CUDA's integer intrinsics.
func (fc *fnCtx) bitsCall(c *ast.CallExpr, callee *types.Func) cx {
	sig := callee.Signature()
	var args []cx
	for i, a := range c.Args {
		if i < sig.Params().Len() {
			args = append(args, fc.valAs(a, sig.Params().At(i).Type()))
		}
	}
	ll := func(x cx) cx { return cast("long long", x) }
	u32 := func(x cx) cx { return cast("unsigned int", x) }
	sub := func(n int, x cx) cx { return cx{s: fmt.Sprint(n) + " - " + x.at(precAdd+1), prec: precAdd} }
	switch callee.Name() {
	case "OnesCount", "OnesCount64":
		return ll(callx("__popcll", args[0]))
	case "OnesCount32":
		return ll(callx("__popc", args[0]))
	case "OnesCount8", "OnesCount16":
		return ll(callx("__popc", u32(args[0])))
	case "LeadingZeros", "LeadingZeros64":
		return ll(callx("__clzll", cast("long long", args[0])))
	case "LeadingZeros32":
		return ll(callx("__clz", cast("int", args[0])))
	case "LeadingZeros16":
		return cx{s: ll(callx("__clz", cast("int", args[0]))).s + " - 16", prec: precAdd}
	case "LeadingZeros8":
		return cx{s: ll(callx("__clz", cast("int", args[0]))).s + " - 24", prec: precAdd}
	case "Len", "Len64":
		return sub(64, ll(callx("__clzll", cast("long long", args[0]))))
	case "Len32":
		return sub(32, ll(callx("__clz", cast("int", args[0]))))
	case "TrailingZeros", "TrailingZeros64":
		return callx("gocu_ctz64", args[0])
	case "TrailingZeros32":
		return callx("gocu_ctz32", args[0])
	case "Reverse", "Reverse64":
		return callx("__brevll", args[0])
	case "Reverse32":
		return callx("__brev", args[0])
	case "RotateLeft", "RotateLeft64":
		return callx("gocu_rotl64", args[0], args[1])
	case "RotateLeft32":
		return callx("gocu_rotl32", args[0], args[1])
	}
	fc.unsupported(c.Pos(), "bits."+callee.Name(), "use OnesCount, LeadingZeros, TrailingZeros, Len, Reverse or RotateLeft")
	return prim("0")
}
