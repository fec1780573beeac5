package gen

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"
)

// Low-precision types and tensor cores: kernel.Half, BFloat16, FP8E4M3 and
// FP8E5M2 (package lowp's types), the pairs Half2 and BFloat16x2, the
// 16-byte Half8 and BFloat16x8, the fragments and MMA functions, LdMatrix
// and CpAsync.
//
// The low-precision types are their bit patterns in C (unsigned short and
// unsigned char), as in Go, and every conversion and instruction is inline
// PTX in the tensor prelude below, which a unit gets only when it uses
// them. gen does not include cuda_fp16.h or cuda_bf16.h: NVRTC finds them
// only with the toolkit's include directory, which a machine with just the
// driver and NVRTC lacks, and gocu compiles with no include path.

const lowpPath = "github.com/gocu-dev/gocu/lowp"

// tensorTypes maps the kernel package's pair and wide types to C.
var tensorTypes = map[string]string{
	"Half2": "gocu_half2", "BFloat16x2": "gocu_bf16x2", "Half8": "gocu_u16x8", "BFloat16x8": "gocu_u16x8",
}

// fragTypes are the kernel package's fragment types: register arrays.
var fragTypes = map[string]bool{"FragA": true, "FragB": true, "FragC": true, "FragATF32": true, "FragBTF32": true,
	"WGAcc64": true, "WGAcc128": true, "WGAcc256": true, "WGDesc": true, "WGSwizzle": true, "MBarrier": true}

// lowpKind returns the low-precision format of t ("f16", "bf16", "e4m3",
// "e5m2"), or "" for other types.
func lowpKind(t types.Type) string {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != lowpPath {
		return ""
	}
	switch n.Obj().Name() {
	case "Float16":
		return "f16"
	case "BFloat16":
		return "bf16"
	case "Float8E4M3":
		return "e4m3"
	case "Float8E5M2":
		return "e5m2"
	}
	return ""
}

// kernelTypeName names t in kernel code: kernel.BFloat16 for lowp.BFloat16.
func kernelTypeName(t types.Type) string {
	switch lowpKind(t) {
	case "f16":
		return "kernel.Half"
	case "bf16":
		return "kernel.BFloat16"
	case "e4m3":
		return "kernel.FP8E4M3"
	case "e5m2":
		return "kernel.FP8E5M2"
	}
	return types.TypeString(t, byName)
}

// lowpOperator rejects Go's arithmetic, ordering and bit operations on
// low-precision values, which would act on their bit patterns. node is
// the expression, or the statement of an op= or ++/--.
func (fc *fnCtx) lowpOperator(op token.Token, t types.Type, node ast.Node) bool {
	if lowpKind(t) == "" || op == token.EQL || op == token.NEQ {
		return false
	}
	name := kernelTypeName(t)
	short := name[len("kernel."):]
	what := "the operator " + op.String()
	hint := "compute in float32: x.Float32() " + op.String() + " y.Float32(), and round back with kernel.To" + short
	switch n := node.(type) {
	case *ast.UnaryExpr:
		hint = "compute in float32: kernel.To" + short + "(" + op.String() + "x.Float32())"
		if op == token.XOR {
			hint = fmt.Sprintf("work on the bits: %s(^uint%d(x))", name, bits(t.Underlying()))
		}
	case *ast.AssignStmt:
		what = "the assignment " + n.Tok.String()
		hint = "compute in float32: x = kernel.To" + short + "(x.Float32() " + op.String() + " y.Float32())"
	case *ast.IncDecStmt:
		what = "the statement " + n.Tok.String()
		hint = "compute in float32: x = kernel.To" + short + "(x.Float32() " + op.String() + " 1)"
	}
	switch op {
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
		hint = "compare in float32: x.Float32() " + op.String() + " y.Float32()"
	case token.REM:
		hint = "compute in float32: kernel.Mod(x.Float32(), y.Float32()), and round back with kernel.To" + short
	case token.AND, token.OR, token.XOR, token.AND_NOT, token.SHL, token.SHR:
		if _, unary := node.(*ast.UnaryExpr); !unary {
			hint = fmt.Sprintf("work on the bits: uint%d(x) %s ..., and %s(bits) to go back", bits(t.Underlying()), op, name)
		}
	}
	fc.unsupported(node.Pos(), what+" on "+name+" (Go applies it to the bit pattern)", hint)
	return true
}

// lowpConvert translates a conversion from or to a low-precision type:
// only between the type and the unsigned integer of its width, which
// reinterprets the bits, as in Go.
func (fc *fnCtx) lowpConvert(x cx, from, to types.Type) (cx, bool) {
	fk, tk := lowpKind(from), lowpKind(to)
	if fk == "" && tk == "" {
		return cx{}, false
	}
	if bits(from) == bits(to) && fk != tk && (fk == "" && !isSigned(from) || tk == "" && !isSigned(to)) && !isFloat(from) && !isFloat(to) {
		return cast(fc.ctype(to), x), true
	}
	if fk != "" && tk != "" && fk == tk {
		return x, true
	}
	lt, other := from, to
	if fk == "" {
		lt, other = to, from
	}
	name := kernelTypeName(lt)
	fc.unsupported(fc.pos, "the conversion between "+name+" and "+types.TypeString(other, byName)+" (Go converts the bit pattern as an integer)",
		fmt.Sprintf("use x.Float32() and kernel.To%s(f) for values, or uint%d(x) and %s(bits) for bit patterns", name[len("kernel."):], bits(lt.Underlying()), name))
	return prim("0"), true
}

// lowpCall translates calls into package lowp: the conversions and the
// methods of its types.
func (fc *fnCtx) lowpCall(c *ast.CallExpr, callee *types.Func) cx {
	fc.u.tensor = true
	sig := callee.Signature()
	name := callee.Name()
	if recv := sig.Recv(); recv != nil {
		k := lowpKind(recv.Type())
		sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
		if k == "" || !ok {
			fc.unsupported(c.Pos(), "the method "+funcDisplayName(callee), "use Float32, Float64, Bits, IsNaN, IsInf and Signbit")
			return prim("0")
		}
		x := fc.valAs(sel.X, recv.Type())
		return fc.lowpMethod(c, k, name, x)
	}
	var args []cx
	for i, a := range c.Args {
		args = append(args, fc.valAs(a, sig.Params().At(i).Type()))
	}
	kinds := map[string]string{"Float16": "f16", "BFloat16": "bf16", "Float8E4M3": "e4m3", "Float8E5M2": "e5m2"}
	for prefix, k := range kinds {
		switch name {
		case prefix + "FromFloat32":
			return callx("gocu_f32_to_"+k, args[0])
		case prefix + "FromBits":
			return args[0]
		}
	}
	fc.unsupported(c.Pos(), "lowp."+name, "use the FromFloat32 and FromBits functions and the Float32, Bits, IsNaN, IsInf and Signbit methods, or kernel.ToHalf and its kin")
	return prim("0")
}

func (fc *fnCtx) lowpMethod(c *ast.CallExpr, k, name string, x cx) cx {
	signMask, expMask := "0x8000u", map[string]string{"f16": "0x7c00u", "bf16": "0x7f80u", "e5m2": "0x7cu"}[k]
	abs := "0x7fffu"
	if k == "e4m3" || k == "e5m2" {
		signMask, abs = "0x80u", "0x7fu"
	}
	bitsOf := "(unsigned int)" + x.at(precUnary)
	switch name {
	case "Float32":
		return callx("gocu_"+k+"_to_f32", x)
	case "Float64":
		return cast("double", callx("gocu_"+k+"_to_f32", x))
	case "Bits":
		return x
	case "Signbit":
		return cx{s: "(" + bitsOf + " & " + signMask + ") != 0u", prec: precEq}
	case "IsNaN":
		if k == "e4m3" {
			return cx{s: "(" + bitsOf + " & 0x7fu) == 0x7fu", prec: precEq}
		}
		return cx{s: "(" + bitsOf + " & " + abs + ") > " + expMask, prec: precRel}
	case "IsInf":
		if k == "e4m3" {
			return prim("false")
		}
		return cx{s: "(" + bitsOf + " & " + abs + ") == " + expMask, prec: precEq}
	}
	fc.unsupported(c.Pos(), "the method "+name+" of a low-precision value", "use Float32, Float64, Bits, IsNaN, IsInf and Signbit")
	return prim("0")
}

// tensorMethod translates the methods of Half2 and BFloat16x2.
func (fc *fnCtx) tensorMethod(c *ast.CallExpr, recvType types.Type, name string) (cx, bool) {
	n, ok := types.Unalias(recvType).(*types.Named)
	if !ok {
		return cx{}, false
	}
	var k string
	switch n.Obj().Name() {
	case "Half2":
		k = "f16"
	case "BFloat16x2":
		k = "bf16"
	default:
		return cx{}, false
	}
	fc.u.tensor = true
	sel := c.Fun.(*ast.SelectorExpr)
	x := fc.valAs(sel.X, recvType)
	switch name {
	case "Float2":
		return callx("gocu_"+k+"x2_to_float2", x), true
	case "Bits":
		return callx("gocu_"+k+"x2_bits", x), true
	}
	return cx{}, false
}

// tensorCall translates the kernel package's low-precision, matrix and
// asynchronous-copy functions; ok is false for other functions.
func (fc *fnCtx) tensorCall(c *ast.CallExpr, name string, args func(from int) []cx) (cx, bool) {
	conv := map[string]string{
		"ToHalf": "gocu_f32_to_f16", "ToBFloat16": "gocu_f32_to_bf16", "ToFP8E4M3": "gocu_f32_to_e4m3", "ToFP8E5M2": "gocu_f32_to_e5m2",
		"ToHalf2": "gocu_f16x2_of", "ToBFloat16x2": "gocu_bf16x2_of", "PackHalf2": "gocu_pack_f16x2", "PackBFloat16x2": "gocu_pack_bf16x2",
		"Half2FromBits": "gocu_f16x2_from_bits", "BFloat16x2FromBits": "gocu_bf16x2_from_bits", "ToTF32": "gocu_tf32",
	}
	if f, ok := conv[name]; ok {
		fc.u.tensor = true
		return callx(f, args(0)...), true
	}
	switch name {
	case "MMABF16", "MMAF16", "MMATF32":
		fc.u.tensor = true
		fc.eff.warp = true
		f := map[string]string{"MMABF16": "gocu_mma_bf16", "MMAF16": "gocu_mma_f16", "MMATF32": "gocu_mma_tf32"}[name]
		return callx(f, args(1)...), true
	case "LdMatrixX1", "LdMatrixX2", "LdMatrixX4", "LdMatrixX1Trans", "LdMatrixX2Trans", "LdMatrixX4Trans":
		fc.u.tensor = true
		fc.eff.warp, fc.eff.reads, fc.eff.shared = true, true, true
		f := "gocu_ldsm_" + map[string]string{"LdMatrixX1": "x1", "LdMatrixX2": "x2", "LdMatrixX4": "x4",
			"LdMatrixX1Trans": "x1_trans", "LdMatrixX2Trans": "x2_trans", "LdMatrixX4Trans": "x4_trans"}[name]
		return callx(f, args(1)...), true
	case "CpAsync":
		fc.u.tensor = true
		fc.eff.writes, fc.eff.reads, fc.eff.shared = true, true, true
		return callx("gocu_cp_async", args(1)...), true
	case "CpAsyncZfill":
		fc.u.tensor = true
		fc.eff.writes, fc.eff.reads, fc.eff.shared = true, true, true
		return callx("gocu_cp_async_zfill", args(1)...), true
	case "CpAsyncCommit":
		fc.u.tensor = true
		fc.eff.writes = true
		return prim("gocu_cp_async_commit()"), true
	case "WGDescriptor":
		fc.u.tensor, fc.u.wgmma = true, true
		fc.eff.shared = true
		return callx("gocu_wg_desc", args(1)...), true
	case "WGMMABF16", "WGMMAF16", "WGMMABF16RS", "WGMMAF16RS":
		return fc.wgmmaCall(c, name), true
	case "WGFence", "WGCommit", "FenceProxyAsync":
		fc.u.tensor, fc.u.wgmma = true, true
		fc.eff.warp, fc.eff.writes, fc.eff.reads, fc.eff.shared = true, true, true, true
		fc.eff.sm90a = fc.eff.sm90a || name != "FenceProxyAsync" // the fence is sm_90's
		return prim(map[string]string{"WGFence": "gocu_wgmma_fence()", "WGCommit": "gocu_wgmma_commit()", "FenceProxyAsync": "gocu_fence_proxy_async()"}[name]), true
	case "WGWait":
		fc.u.tensor, fc.u.wgmma = true, true
		fc.eff.warp, fc.eff.writes, fc.eff.reads, fc.eff.shared, fc.eff.sm90a = true, true, true, true, true
		n, ok := fc.constArg(c.Args[1], 0, 7, "a WGWait count", "PTX wgmma.wait_group takes an immediate: write a constant")
		acc, _, ok2 := fc.wgAcc(c.Args[2], "WGWait")
		if !ok || !ok2 {
			return prim("0"), true
		}
		return prim(fmt.Sprintf("gocu_wgmma_wait<%d>(%s)", n, acc.s)), true
	case "BarSync", "BarArrive":
		fc.u.named = true
		fc.eff.barrier = true
		return callx(map[string]string{"BarSync": "gocu_bar_sync", "BarArrive": "gocu_bar_arrive"}[name], args(1)...), true
	case "MBarInit", "MBarArrive", "MBarArriveExpectTx", "MBarWait", "CpAsyncBulk":
		fc.u.tensor, fc.u.mbar = true, true
		fc.eff.barrier, fc.eff.writes, fc.eff.reads, fc.eff.shared = true, true, true, true
		f := map[string]string{"MBarInit": "gocu_mbar_init", "MBarArrive": "gocu_mbar_arrive", "MBarArriveExpectTx": "gocu_mbar_arrive_tx",
			"MBarWait": "gocu_mbar_wait", "CpAsyncBulk": "gocu_cp_async_bulk"}[name]
		// The barrier is &bars[i] of a shared array, translated like an
		// atomic's address; the other arguments are values.
		var xs []cx
		for i, a := range c.Args[1:] {
			if i == len(c.Args)-2 && name == "CpAsyncBulk" || i == 0 && name != "CpAsyncBulk" {
				if !fc.barrierArg(a) {
					return prim("0"), true
				}
				xs = append(xs, fc.atomicTarget(a))
				continue
			}
			xs = append(xs, fc.val(a))
		}
		return callx(f, xs...), true
	case "SetMaxNReg":
		fc.u.named, fc.u.tensor, fc.u.wgmma = true, true, true // sm_90a
		fc.eff.sm90a = true
		n, ok := fc.constArg(c.Args[1], 24, 256, "a SetMaxNReg count", "PTX setmaxnreg takes an immediate multiple of 8 from 24 to 256: write a constant")
		inc := fc.info.Types[c.Args[2]]
		if inc.Value == nil || inc.Value.Kind() != constant.Bool {
			fc.unsupported(c.Args[2].Pos(), "a SetMaxNReg inc that is not a constant", "PTX has setmaxnreg.inc and setmaxnreg.dec: write true or false")
			ok = false
		}
		if ok && n%8 != 0 {
			fc.unsupported(c.Args[1].Pos(), fmt.Sprintf("a SetMaxNReg count of %d, not a multiple of 8", n), "round the count to a multiple of 8")
			ok = false
		}
		if !ok {
			return prim("0"), true
		}
		return prim(fmt.Sprintf("gocu_setmaxnreg<%d, %v>()", n, constant.BoolVal(inc.Value))), true
	case "CpAsyncWait":
		fc.u.tensor = true
		fc.eff.writes = true
		tv := fc.info.Types[c.Args[1]]
		n, exact := int64(0), false
		if tv.Value != nil {
			n, exact = constant.Int64Val(constant.ToInt(tv.Value))
		}
		if !exact || n < 0 || n > 7 {
			fc.unsupported(c.Args[1].Pos(), "a CpAsyncWait count that is not a constant from 0 to 7", "PTX cp.async.wait_group takes an immediate: write a constant")
			return prim("0"), true
		}
		return prim(fmt.Sprintf("gocu_cp_async_wait<%d>()", n)), true
	}
	return cx{}, false
}

// barrierArg reports whether e is &bars[i] of a shared array of
// barriers, or reports it.
func (fc *fnCtx) barrierArg(e ast.Expr) bool {
	if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.AND {
		if ix, ok := ast.Unparen(u.X).(*ast.IndexExpr); ok {
			if _, isPtr := fc.typeOf(ix.X).Underlying().(*types.Pointer); isPtr || fc.isSharedExpr(ix.X) {
				return true
			}
		}
	}
	fc.unsupported(e.Pos(), "a memory barrier that is not &bars[i] of a shared array", "declare barriers with bars := kernel.Shared[[n]kernel.MBarrier](t) and pass &bars[i]")
	return false
}

// constArg returns the constant integer value of e, which must be from lo
// to hi.
func (fc *fnCtx) constArg(e ast.Expr, lo, hi int64, what, instead string) (int64, bool) {
	tv := fc.info.Types[e]
	n, exact := int64(0), false
	if tv.Value != nil {
		n, exact = constant.Int64Val(constant.ToInt(tv.Value))
	}
	if !exact || n < lo || n > hi {
		fc.unsupported(e.Pos(), fmt.Sprintf("%s that is not a constant from %d to %d", what, lo, hi), instead)
		return 0, false
	}
	return n, true
}

// wgAcc translates the accumulator argument &x of a warpgroup MMA: x as
// an lvalue, and its number of float32 registers.
func (fc *fnCtx) wgAcc(e ast.Expr, op string) (cx, int64, bool) {
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		fc.unsupported(e.Pos(), "a "+op+" accumulator that is not &x", "pass the address of the accumulator variable, such as &acc or &acc[i]")
		return prim("0"), 0, false
	}
	arr, ok := fc.typeOf(u.X).Underlying().(*types.Array)
	if !ok {
		fc.unsupported(e.Pos(), "a "+op+" accumulator that is not an array", "use kernel.WGAcc64, WGAcc128 or WGAcc256")
		return prim("0"), 0, false
	}
	return fc.lvalue(u.X), arr.Len(), true
}

// wgmmaCall translates kernel.WGMMABF16(t, &acc, a, b, transB, accumulate).
func (fc *fnCtx) wgmmaCall(c *ast.CallExpr, name string) cx {
	fc.u.tensor, fc.u.wgmma = true, true
	fc.eff.warp, fc.eff.writes, fc.eff.reads, fc.eff.shared, fc.eff.sm90a = true, true, true, true, true
	acc, regs, ok := fc.wgAcc(c.Args[1], name)
	tb := fc.info.Types[c.Args[4]]
	if tb.Value == nil || tb.Value.Kind() != constant.Bool {
		fc.unsupported(c.Args[4].Pos(), "a "+name+" transB that is not a constant", "PTX wgmma takes the transpose as an immediate: write true or false")
		ok = false
	}
	if !ok {
		return prim("0")
	}
	trans := 0
	if constant.BoolVal(tb.Value) {
		trans = 1
	}
	desc := types.Typ[types.Uint64]
	var a cx
	if strings.HasSuffix(name, "RS") {
		a = fc.val(c.Args[2]) // a FragA: gocu_array<unsigned int, 4>
	} else {
		a = fc.valAs(c.Args[2], desc)
	}
	b := fc.valAs(c.Args[3], desc)
	accum := fc.valAs(c.Args[5], types.Typ[types.Bool])
	kind := map[string]string{"WGMMABF16": "bf16", "WGMMAF16": "f16", "WGMMABF16RS": "bf16_rs", "WGMMAF16RS": "f16_rs"}[name]
	return prim(fmt.Sprintf("gocu_wgmma_%s_n%d<%d>(%s, %s, %s, %s)", kind, 2*regs, trans, acc.s, a.s, b.s, accum.s))
}

// namedHeader is the prelude of units that use named barriers or
// register reallocation. bar.sync and bar.arrive are bar{.cta}.sync.aligned
// and .arrive.aligned: every lane of a warp executes them together.
const namedHeader = `// ---- gocu: named barriers and register reallocation (see kernel.BarSync) ----
__device__ __forceinline__ void gocu_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void gocu_bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(n) : "memory"); }
template <int N, bool INC> __device__ __forceinline__ void gocu_setmaxnreg() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (INC) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(N));
  } else {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(N));
  }
#else
  __trap();
#endif
}
`

// mbarHeader is the prelude of units that use memory barriers or bulk
// copies, after the tensor prelude. They are sm_90's (try_wait, expect_tx
// and cp.async.bulk); elsewhere the functions trap. MBarInit's fence makes
// the initialised barrier visible to the async proxy, which the copies use.
const mbarHeader = `// ---- gocu: memory barriers and bulk copies (sm_90; see kernel.MBarrier) ----
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void gocu_mbar_init(unsigned long long* b, int n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(gocu_smem(b)), "r"(n) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void gocu_mbar_arrive(unsigned long long* b) {
  unsigned long long s;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(s) : "r"(gocu_smem(b)) : "memory");
}
__device__ __forceinline__ void gocu_mbar_arrive_tx(unsigned long long* b, int n) {
  unsigned long long s;
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(gocu_smem(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void gocu_mbar_wait(unsigned long long* b, unsigned int parity) {
  unsigned int a = gocu_smem(b), ok;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}" : "=r"(ok) : "r"(a), "r"(parity) : "memory");
  } while (!ok);
}
template <typename T> __device__ __forceinline__ void gocu_cp_async_bulk(gocu_slice<T> dst, gocu_slice<T> src, unsigned long long* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(gocu_smem(dst.p)), "l"(src.p), "r"((unsigned int)(dst.n * (long long)sizeof(T))), "r"(gocu_smem(b)) : "memory");
}
#else
__device__ __forceinline__ void gocu_mbar_init(unsigned long long*, int) { __trap(); }
__device__ __forceinline__ void gocu_mbar_arrive(unsigned long long*) { __trap(); }
__device__ __forceinline__ void gocu_mbar_arrive_tx(unsigned long long*, int) { __trap(); }
__device__ __forceinline__ void gocu_mbar_wait(unsigned long long*, unsigned int) { __trap(); }
template <typename T> __device__ __forceinline__ void gocu_cp_async_bulk(gocu_slice<T>, gocu_slice<T>, unsigned long long*) { __trap(); }
#endif
`

// wgmmaHeader is the prelude of units that use warpgroup MMAs, after the
// tensor prelude. wgmma needs the arch-specific target sm_90a (the module
// asks for it: meta.Module.ArchSpecific); elsewhere the functions trap.
func wgmmaHeader() string {
	var b strings.Builder
	b.WriteString(`// ---- gocu: warpgroup MMA (sm_90a; see kernel.WGMMABF16) ----
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GOCU_WGMMA 1
#endif
template <typename T> __device__ __forceinline__ unsigned long long gocu_wg_desc(gocu_slice<T> s, unsigned char sw, int lbo, int sbo) {
  return (unsigned long long)(gocu_smem(s.p) >> 4 & 0x3fffu) | (unsigned long long)((unsigned int)lbo >> 4 & 0x3fffu) << 16 |
         (unsigned long long)((unsigned int)sbo >> 4 & 0x3fffu) << 32 | (unsigned long long)(sw & 3u) << 62;
}
// The async proxy (wgmma, TMA) is sm_90's: ptxas rejects the fence below
// that, where nothing reads through the async proxy and it has nothing
// to order, so it compiles to nothing there (and the module still builds
// for the GPUs that run its other kernels).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void gocu_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
#else
__device__ __forceinline__ void gocu_fence_proxy_async() {}
#endif
#ifdef GOCU_WGMMA
__device__ __forceinline__ void gocu_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void gocu_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// The wait also fences the accumulator's registers, so that the compiler
// does not move their reads above it.
template <int N, int R> __device__ __forceinline__ void gocu_wgmma_wait(gocu_array<float, R>& d) {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
#pragma unroll
  for (int i = 0; i < R; i++) asm volatile("" : "+f"(d.v[i]) :: "memory");
}
#else
__device__ __forceinline__ void gocu_wgmma_fence() { __trap(); }
__device__ __forceinline__ void gocu_wgmma_commit() { __trap(); }
template <int N, int R> __device__ __forceinline__ void gocu_wgmma_wait(gocu_array<float, R>&) { __trap(); }
#endif
`)
	for _, kind := range []string{"bf16", "f16"} {
		for _, n := range []int{64, 128, 256} {
			r := n / 2
			fmt.Fprintf(&b, "template <int TB> __device__ __forceinline__ void gocu_wgmma_%s_n%d(gocu_array<float, %d>& d, unsigned long long a, unsigned long long b, bool acc) {\n", kind, n, r)
			b.WriteString("#ifdef GOCU_WGMMA\n")
			fmt.Fprintf(&b, "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", r+2, n, kind, kind)
			for i := range r {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%%%d", i)
			}
			fmt.Fprintf(&b, "}, %%%d, %%%d, p, 1, 1, 0, %%%d; }\"\n      : ", r, r+1, r+3)
			for i := range r {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "\"+f\"(d.v[%d])", i)
			}
			b.WriteString("\n      : \"l\"(a), \"l\"(b), \"r\"((int)acc), \"n\"(TB));\n#else\n  __trap();\n#endif\n}\n")
		}
	}
	// A in registers (FragA, four .b32 of two elements): no transpose of
	// A, so one immediate fewer.
	for _, kind := range []string{"bf16", "f16"} {
		for _, n := range []int{64, 128, 256} {
			r := n / 2
			fmt.Fprintf(&b, "template <int TB> __device__ __forceinline__ void gocu_wgmma_%s_rs_n%d(gocu_array<float, %d>& d, gocu_array<unsigned int, 4> a, unsigned long long b, bool acc) {\n", kind, n, r)
			b.WriteString("#ifdef GOCU_WGMMA\n")
			fmt.Fprintf(&b, "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", r+5, n, kind, kind)
			for i := range r {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%%%d", i)
			}
			fmt.Fprintf(&b, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, %%%d; }\"\n      : ", r, r+1, r+2, r+3, r+4, r+6)
			for i := range r {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "\"+f\"(d.v[%d])", i)
			}
			b.WriteString("\n      : \"r\"(a.v[0]), \"r\"(a.v[1]), \"r\"(a.v[2]), \"r\"(a.v[3]), \"l\"(b), \"r\"((int)acc), \"n\"(TB));\n#else\n  __trap();\n#endif\n}\n")
		}
	}
	b.WriteString("// ---- end of the warpgroup MMA prelude ----\n")
	return b.String()
}

// tensorHeader is the prelude of units that use low-precision types or
// tensor cores. Every helper is inline PTX for sm_80 and later (the FP8
// conversions need sm_89).
const tensorHeader = `// ---- gocu: low-precision types and tensor cores (see package kernel) ----
struct __align__(4) gocu_half2 { unsigned short x, y; };
struct __align__(4) gocu_bf16x2 { unsigned short x, y; };
struct __align__(16) gocu_u16x8 { unsigned short v[8]; };
__device__ __forceinline__ gocu_half2 make_gocu_half2(unsigned short x, unsigned short y) { return gocu_half2{x, y}; }
__device__ __forceinline__ gocu_bf16x2 make_gocu_bf16x2(unsigned short x, unsigned short y) { return gocu_bf16x2{x, y}; }

__device__ __forceinline__ float gocu_f16_to_f32(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short gocu_f32_to_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float gocu_bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned int)h << 16); }
__device__ __forceinline__ unsigned short gocu_f32_to_bf16(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ unsigned char gocu_f32_to_e4m3(float f) { unsigned short r; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.0f), "f"(f)); return (unsigned char)r; }
__device__ __forceinline__ unsigned char gocu_f32_to_e5m2(float f) { unsigned short r; asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.0f), "f"(f)); return (unsigned char)r; }
__device__ __forceinline__ float gocu_e4m3_to_f32(unsigned char x) { unsigned int h; asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h) : "h"((unsigned short)x)); return gocu_f16_to_f32((unsigned short)h); }
__device__ __forceinline__ float gocu_e5m2_to_f32(unsigned char x) { unsigned int h; asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h) : "h"((unsigned short)x)); return gocu_f16_to_f32((unsigned short)h); }
__device__ __forceinline__ float gocu_tf32(float f) { unsigned int r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f)); return __uint_as_float(r); }

// Pairs: lo in the low 16 bits (cvt's second source operand).
__device__ __forceinline__ unsigned int gocu_pack_f16x2(float lo, float hi) { unsigned int r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
__device__ __forceinline__ unsigned int gocu_pack_bf16x2(float lo, float hi) { unsigned int r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
__device__ __forceinline__ gocu_half2 gocu_f16x2_from_bits(unsigned int r) { return gocu_half2{(unsigned short)r, (unsigned short)(r >> 16)}; }
__device__ __forceinline__ gocu_bf16x2 gocu_bf16x2_from_bits(unsigned int r) { return gocu_bf16x2{(unsigned short)r, (unsigned short)(r >> 16)}; }
__device__ __forceinline__ gocu_half2 gocu_f16x2_of(float x, float y) { return gocu_f16x2_from_bits(gocu_pack_f16x2(x, y)); }
__device__ __forceinline__ gocu_bf16x2 gocu_bf16x2_of(float x, float y) { return gocu_bf16x2_from_bits(gocu_pack_bf16x2(x, y)); }
__device__ __forceinline__ unsigned int gocu_f16x2_bits(gocu_half2 h) { return (unsigned int)h.x | (unsigned int)h.y << 16; }
__device__ __forceinline__ unsigned int gocu_bf16x2_bits(gocu_bf16x2 h) { return (unsigned int)h.x | (unsigned int)h.y << 16; }
__device__ __forceinline__ float2 gocu_f16x2_to_float2(gocu_half2 h) { return make_float2(gocu_f16_to_f32(h.x), gocu_f16_to_f32(h.y)); }
__device__ __forceinline__ float2 gocu_bf16x2_to_float2(gocu_bf16x2 h) { return make_float2(gocu_bf16_to_f32(h.x), gocu_bf16_to_f32(h.y)); }

// Warp-level MMA: D = A B + C, fp32 accumulators.
__device__ __forceinline__ gocu_array<float, 4> gocu_mma_bf16(gocu_array<unsigned int, 4> a, gocu_array<unsigned int, 2> b, gocu_array<float, 4> c) {
  gocu_array<float, 4> d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
      : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.v[0]), "r"(b.v[1]), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
  return d;
}
__device__ __forceinline__ gocu_array<float, 4> gocu_mma_f16(gocu_array<unsigned int, 4> a, gocu_array<unsigned int, 2> b, gocu_array<float, 4> c) {
  gocu_array<float, 4> d;
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
      : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.v[0]), "r"(b.v[1]), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
  return d;
}
__device__ __forceinline__ gocu_array<float, 4> gocu_mma_tf32(gocu_array<float, 4> a, gocu_array<float, 2> b, gocu_array<float, 4> c) {
  gocu_array<float, 4> d;
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d.v[0]), "=f"(d.v[1]), "=f"(d.v[2]), "=f"(d.v[3])
      : "r"(__float_as_uint(a.v[0])), "r"(__float_as_uint(a.v[1])), "r"(__float_as_uint(a.v[2])), "r"(__float_as_uint(a.v[3])),
        "r"(__float_as_uint(b.v[0])), "r"(__float_as_uint(b.v[1])), "f"(c.v[0]), "f"(c.v[1]), "f"(c.v[2]), "f"(c.v[3]));
  return d;
}

// Shared-memory addresses for ldmatrix and cp.async (the shared window's
// 32-bit offset of a generic pointer). The compiler's own conversion, not
// inline PTX: it sees that the pointer is shared memory plus an offset and
// does the address arithmetic in 32 bits.
__device__ __forceinline__ unsigned int gocu_smem(const void* p) { return (unsigned int)__cvta_generic_to_shared(p); }
template <typename T> __device__ __forceinline__ gocu_array<unsigned int, 4> gocu_ldsm_x4(gocu_slice<T> s) {
  gocu_array<unsigned int, 4> r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r.v[0]), "=r"(r.v[1]), "=r"(r.v[2]), "=r"(r.v[3]) : "r"(gocu_smem(s.p)));
  return r;
}
template <typename T> __device__ __forceinline__ gocu_array<unsigned int, 4> gocu_ldsm_x4_trans(gocu_slice<T> s) {
  gocu_array<unsigned int, 4> r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r.v[0]), "=r"(r.v[1]), "=r"(r.v[2]), "=r"(r.v[3]) : "r"(gocu_smem(s.p)));
  return r;
}
template <typename T> __device__ __forceinline__ gocu_array<unsigned int, 2> gocu_ldsm_x2(gocu_slice<T> s) {
  gocu_array<unsigned int, 2> r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r.v[0]), "=r"(r.v[1]) : "r"(gocu_smem(s.p)));
  return r;
}
template <typename T> __device__ __forceinline__ gocu_array<unsigned int, 2> gocu_ldsm_x2_trans(gocu_slice<T> s) {
  gocu_array<unsigned int, 2> r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r.v[0]), "=r"(r.v[1]) : "r"(gocu_smem(s.p)));
  return r;
}
template <typename T> __device__ __forceinline__ unsigned int gocu_ldsm_x1(gocu_slice<T> s) {
  unsigned int r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(gocu_smem(s.p)));
  return r;
}
template <typename T> __device__ __forceinline__ unsigned int gocu_ldsm_x1_trans(gocu_slice<T> s) {
  unsigned int r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(gocu_smem(s.p)));
  return r;
}

// Asynchronous copies of 16 bytes, global to shared, bypassing L1.
template <typename T> __device__ __forceinline__ void gocu_cp_async(gocu_slice<T> dst, gocu_slice<T> src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(gocu_smem(dst.p)), "l"(src.p) : "memory");
}
template <typename T> __device__ __forceinline__ void gocu_cp_async_zfill(gocu_slice<T> dst, gocu_slice<T> src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(gocu_smem(dst.p)), "l"(src.p), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void gocu_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void gocu_cp_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
// ---- end of the tensor prelude ----
`
