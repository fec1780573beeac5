package cudagen

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// matmulTile is the tile edge of the integer matrix product.
const matmulTile = 16

// IntMatMul generates the batched matrix product for integer and bool
// dtypes, which cuBLAS does not provide: 16×16 shared-memory tiles, one
// block per output tile and batch index (grid x = ceil(N/16), y =
// ceil(M/16), z = batch count). Operands take any row and column strides
// and per-batch-dimension strides; C is contiguous. Integers wrap; bool is
// the OR of ANDs.
func IntMatMul(dt backend.DType, batchRank int) (*Kernel, error) {
	return IntMatMulOf(dt, dt, batchRank)
}

// IntMatMulOf is IntMatMul with operands of dtype in and a result of dtype
// dt: the same, or int8 operands into int32 (the fallback of the int8
// product when cuBLASLt cannot take it).
func IntMatMulOf(in, dt backend.DType, batchRank int) (*Kernel, error) {
	if dt.IsFloating() || !dt.Valid() || (in != dt && !(in == backend.Int8 && dt == backend.Int32)) || dt.IsStorage() {
		return nil, fmt.Errorf("cudagen: IntMatMul of %v into %v (floats go to cuBLAS)", in, dt)
	}
	name := fmt.Sprintf("gocu_mm_%v_b%d", dt, batchRank)
	if in != dt {
		name = fmt.Sprintf("gocu_mm_%v_%v_b%d", in, dt, batchRank)
	}
	T, TI := ctype(dt), ctype(in)
	g := &gen{k: &Kernel{Name: name, Block: matmulTile * matmulTile, Grid: GridTiles}}
	g.add(fmt.Sprintf("%s* __restrict__ c", T), Param{Name: "c", Type: Ptr, Role: RoleOut})
	g.add(fmt.Sprintf("const %s* __restrict__ a", TI), Param{Name: "a", Type: Ptr, Role: RoleIn, Index: 0})
	g.add(fmt.Sprintf("const %s* __restrict__ b", TI), Param{Name: "b", Type: Ptr, Role: RoleIn, Index: 1})
	for _, s := range []struct {
		n string
		r Role
	}{{"M", RoleM}, {"N", RoleN}, {"K", RoleK}} {
		g.add("long long "+s.n, Param{Name: s.n, Type: I64, Role: s.r})
	}
	for i, m := range []string{"a", "b"} {
		g.add(fmt.Sprintf("long long %srs", m), Param{Name: m + "rs", Type: I64, Role: RoleStride, Index: i, Dim: 0})
		g.add(fmt.Sprintf("long long %scs", m), Param{Name: m + "cs", Type: I64, Role: RoleStride, Index: i, Dim: 1})
	}
	for d := 0; d < batchRank; d++ {
		g.add(fmt.Sprintf("long long bd%d", d), Param{Name: fmt.Sprintf("bd%d", d), Type: I64, Role: RoleBatchDim, Dim: d})
		for i, m := range []string{"a", "b"} {
			g.add(fmt.Sprintf("long long %sbs%d", m, d), Param{Name: fmt.Sprintf("%sbs%d", m, d), Type: I64, Role: RoleBatchStride, Index: i, Dim: d})
		}
	}
	zero, mac := "(T)0", "acc = (T)((U)acc + (U)as[ty][p] * (U)bs[p][tx]);"
	switch dt {
	case backend.Bool:
		zero, mac = "false", "acc = acc || (as[ty][p] && bs[p][tx]);"
	case backend.Uint8:
		mac = "acc = (unsigned char)(acc + as[ty][p] * bs[p][tx]);"
	}
	u := utype(dt)
	mac = strings.ReplaceAll(strings.ReplaceAll(mac, "(T)", "("+T+")"), "(U)", "("+u+")")
	zero = strings.ReplaceAll(zero, "(T)", "("+T+")")
	var b strings.Builder
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", matmulTile*matmulTile, name, strings.Join(g.params, ", "))
	fmt.Fprintf(&b, "\t__shared__ %s as[%d][%d];\n\t__shared__ %s bs[%d][%d];\n", TI, matmulTile, matmulTile, TI, matmulTile, matmulTile)
	b.WriteString("\tconst int tx = threadIdx.x % 16, ty = threadIdx.x / 16;\n")
	b.WriteString("\tconst long long row = (long long)blockIdx.y * 16 + ty, col = (long long)blockIdx.x * 16 + tx;\n")
	b.WriteString("\tlong long ao = 0, bo = 0;\n")
	if batchRank > 0 {
		b.WriteString("\tlong long rem = blockIdx.z;\n")
	}
	for d := batchRank - 1; d >= 0; d-- {
		fmt.Fprintf(&b, "\t{ const long long i = rem %% bd%d; rem /= bd%d; ao += i * abs%d; bo += i * bbs%d; }\n", d, d, d, d)
	}
	b.WriteString("\tconst long long co = (long long)blockIdx.z * M * N;\n")
	fmt.Fprintf(&b, "\t%s acc = %s;\n", T, zero)
	b.WriteString("\tfor (long long k0 = 0; k0 < K; k0 += 16) {\n")
	zeroIn := strings.ReplaceAll(zero, "("+T+")", "("+TI+")")
	fmt.Fprintf(&b, "\t\tas[ty][tx] = (row < M && k0 + tx < K) ? a[ao + row * ars + (k0 + tx) * acs] : %s;\n", zeroIn)
	fmt.Fprintf(&b, "\t\tbs[ty][tx] = (k0 + ty < K && col < N) ? b[bo + (k0 + ty) * brs + col * bcs] : %s;\n", zeroIn)
	b.WriteString("\t\t__syncthreads();\n#pragma unroll\n\t\tfor (int p = 0; p < 16; p++) " + mac + "\n\t\t__syncthreads();\n\t}\n")
	b.WriteString("\tif (row < M && col < N) c[co + row * N + col] = acc;\n}\n")
	g.k.Source = b.String()
	return g.k, nil
}
