package cudagen

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/philox"
)

var philoxSource = sync.OnceValue(philox.CUDASource)

// Random generates the Philox fill kernel for a float dtype and a
// distribution: thread j computes Philox block Counter+j and stores its
// values, exactly as package philox defines them (the same bits as the CPU).
func Random(dt backend.DType, dist backend.Dist) (*Kernel, error) {
	if !dt.IsFloat() {
		return nil, fmt.Errorf("cudagen: random fill of %v", dt)
	}
	name := fmt.Sprintf("gocu_rand_%v_%d", dt, dist)
	g := &gen{k: &Kernel{Name: name, Block: blockSize, Grid: GridStride}}
	g.add(fmt.Sprintf("%s* __restrict__ out", ctype(dt)), Param{Name: "out", Type: Ptr, Role: RoleOut})
	g.add("long long n", Param{Name: "n", Type: I64, Role: RoleCount})
	g.add("unsigned long long seed", Param{Name: "seed", Type: U64, Role: RoleSeed})
	g.add("unsigned long long ctr", Param{Name: "ctr", Type: U64, Role: RoleCounter})
	g.add("double p0", Param{Name: "p0", Type: F64, Role: RoleP0})
	g.add("double p1", Param{Name: "p1", Type: F64, Role: RoleP1})
	per := philox.PerBlock(dt == backend.Float64, dist == backend.Normal)
	var b strings.Builder
	b.WriteString(philoxSource())
	fmt.Fprintf(&b, "\nextern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", blockSize, name, strings.Join(g.params, ", "))
	fmt.Fprintf(&b, "\tconst long long nb = (n + %d) / %d;\n", per-1, per)
	b.WriteString("\tconst double d = __dsub_rn(p1, p0);\n\t(void)d;\n")
	b.WriteString("\tfor (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < nb; j += (long long)gridDim.x * blockDim.x) {\n")
	b.WriteString("\t\tunsigned int x[4];\n\t\tgocu_philox_at(seed, ctr + (unsigned long long)j, x);\n")
	fmt.Fprintf(&b, "\t\tconst long long e = j * %d;\n", per)
	switch {
	case dist == backend.Uniform && dt == backend.Float32:
		b.WriteString("#pragma unroll\n\t\tfor (int w = 0; w < 4; w++)\n\t\t\tif (e + w < n) out[e + w] = gocu_philox_scale32(gocu_philox_u32(x[w]), p0, d, p1);\n")
	case dist == backend.Uniform:
		b.WriteString("\t\tout[e] = gocu_philox_scale64(gocu_philox_u64(x[0], x[1]), p0, d, p1);\n")
		b.WriteString("\t\tif (e + 1 < n) out[e + 1] = gocu_philox_scale64(gocu_philox_u64(x[2], x[3]), p0, d, p1);\n")
	default:
		b.WriteString("\t\tdouble z0, z1;\n\t\tgocu_philox_normals(x, &z0, &z1);\n")
		conv := "__double2float_rn"
		if dt == backend.Float64 {
			conv = ""
		}
		fmt.Fprintf(&b, "\t\tout[e] = %s(__dadd_rn(p0, __dmul_rn(p1, z0)));\n", conv)
		fmt.Fprintf(&b, "\t\tif (e + 1 < n) out[e + 1] = %s(__dadd_rn(p0, __dmul_rn(p1, z1)));\n", conv)
	}
	b.WriteString("\t}\n}\n")
	g.k.Source = b.String()
	return g.k, nil
}
