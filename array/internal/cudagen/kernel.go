package cudagen

import (
	"fmt"
	"hash/fnv"
)

// Kernel is one generated kernel.
type Kernel struct {
	Name   string  // the extern "C" entry point
	Source string  // the translation unit
	Params []Param // the entry point's parameters, in order
	Block  int     // threads per block the kernel is written for
	// Grid says how the backend sizes the grid: GridStride kernels take any
	// grid (a multiple of the SM count is best); GridRows kernels take one
	// block per row or output (Param RoleRows says how many).
	Grid GridKind
}

// GridKind tells the launcher how to size the grid.
type GridKind uint8

const (
	GridStride GridKind = iota // any number of blocks; threads loop
	GridRows                   // one block per row/output; threads cooperate
	GridOne                    // exactly one block
	GridTiles                  // matmul: x = ceil(N/Tile), y = ceil(M/Tile), z = batch
)

// Type is a parameter's C type.
type Type uint8

// Parameter types as they travel in the launch's argument array.
const (
	Ptr Type = iota // device pointer, 8 bytes
	I32             // int
	I64             // long long
	F64             // double
	U64             // unsigned long long
)

func (t Type) String() string {
	return [...]string{"ptr", "int", "long long", "double", "unsigned long long"}[t]
}

// Role says which value a parameter takes.
type Role uint8

// Parameter roles. Index is the input, scalar or output number; Dim the
// dimension.
const (
	RoleOut          Role = iota // output buffer (offset applied)
	RoleIn                       // input Index (offset applied)
	RoleScalar                   // scalar Index (double for floats, long long otherwise)
	RoleCount                    // number of elements (or of outputs)
	RoleDim                      // size of dimension Dim
	RoleStride                   // stride of input Index along Dim (Index -1: the output)
	RoleRedDim                   // size of reduced dimension Dim
	RoleRedStride                // stride of input Index along reduced dimension Dim
	RoleRedCount                 // number of elements reduced per output
	RolePartial                  // scratch buffer of Kernel.Partials accumulators
	RolePartialCount             // number of partials
	RoleRowLen                   // length of the softmax axis
	RoleRowStride                // stride of input Index (or -1 the output) along the softmax axis
	RoleRows                     // number of rows / outputs (grid size for GridRows)
	RoleSeed                     // Philox seed
	RoleCounter                  // first Philox block
	RoleP0                       // distribution parameter 0 (lo or mean)
	RoleP1                       // distribution parameter 1 (hi or std)
	RoleM                        // matmul M, N, K
	RoleN
	RoleK
	RoleLD          // leading dimension of matrix Index (0 A, 1 B)
	RoleBatchDim    // matmul batch dimension Dim
	RoleBatchStride // matmul batch stride of matrix Index (0 A, 1 B, 2 C) along Dim
	RoleScale       // quantisation: the per-row scales written (float32, contiguous over rows)
	RoleDimDiv      // DivMagic of RoleDim Dim's size, packed by DivArg
	RoleRedDimDiv   // DivMagic of RoleRedDim Dim's size, packed by DivArg
)

// Param is one kernel parameter.
type Param struct {
	Name  string
	Type  Type
	Role  Role
	Index int
	Dim   int
}

func (p Param) String() string {
	return fmt.Sprintf("%s %s (role %d, index %d, dim %d)", p.Type, p.Name, p.Role, p.Index, p.Dim)
}

// kernelName derives a stable entry point name from a specialisation key.
func kernelName(prefix, key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	return fmt.Sprintf("gocu_%s_%016x", prefix, h.Sum64())
}

// DivMagic returns the multiplier m and shift s that divide by d with a
// multiply-high, an add and a shift (Granlund and Montgomery, as in
// PyTorch's IntDivider): n/d == (umulhi(n, m) + n) >> s for all
// 0 <= n < 2^31, for 1 <= d <= 2^31. It returns zeros for other d.
func DivMagic(d int64) (m, s uint32) {
	if d < 1 || d > 1<<31 {
		return 0, 0
	}
	for uint64(1)<<s < uint64(d) {
		s++
	}
	return uint32((uint64(1)<<32)*(uint64(1)<<s-uint64(d))/uint64(d) + 1), s
}

// DivArg is the argument of a RoleDimDiv or RoleRedDimDiv parameter for a
// dimension of size d: DivMagic's multiplier in the low 32 bits and its
// shift in the high ones.
func DivArg(d int) Arg {
	m, s := DivMagic(int64(d))
	return u64(uint64(s)<<32 | uint64(m))
}
