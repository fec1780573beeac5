package cublas

import (
	"errors"
	"strings"
	"testing"
)

// Plan refuses, before cuBLASLt sees them, the shapes and layouts the
// int8 (IMMA) and FP8 kernels cannot take, naming the rule. The checks
// need no library or GPU.
func TestLtPlanChecksRules(t *testing.T) {
	int8TN := LtMatmul{TransA: Trans, TransB: NoTrans, M: 64, N: 32, K: 128,
		TypeA: R8I, TypeB: R8I, TypeC: R32I, TypeD: R32I, LDA: 128, LDB: 128, LDC: 64, LDD: 64,
		Compute: Compute32I, ScaleType: R32I}
	fp8TN := LtMatmul{TransA: Trans, TransB: NoTrans, M: 64, N: 32, K: 128,
		TypeA: R8FE4M3, TypeB: R8FE4M3, TypeC: R16BF, TypeD: R16BF, LDA: 128, LDB: 128, LDC: 64, LDD: 64,
		Compute: Compute32F, ScaleType: R32F}
	cases := []struct {
		name string
		edit func(m *LtMatmul)
		base LtMatmul
		want string
	}{
		{"int8 NN", func(m *LtMatmul) { m.TransA, m.LDA = NoTrans, 64 }, int8TN, "TN form"},
		{"int8 K", func(m *LtMatmul) { m.K, m.LDA, m.LDB = 126, 126, 126 }, int8TN, "multiples of 4"},
		{"int8 M", func(m *LtMatmul) { m.M, m.LDC, m.LDD = 62, 62, 62 }, int8TN, "multiples of 4"},
		{"int8 ld", func(m *LtMatmul) { m.LDA = 130 }, int8TN, "leading dimensions"},
		{"int8 align", func(m *LtMatmul) { m.Align = [4]int{2, 16, 16, 16} }, int8TN, "aligned to 4"},
		{"int8 output", func(m *LtMatmul) { m.TypeD, m.TypeC = R32F, R32F }, int8TN, "R32I C and D"},
		{"fp8 NT", func(m *LtMatmul) { m.TransB, m.LDB = Trans, 32 }, fp8TN, "TN form"},
		{"fp8 K", func(m *LtMatmul) { m.K, m.LDA, m.LDB = 120, 120, 120 }, fp8TN, "multiples of 16"},
		{"fp8 e5m2 both", func(m *LtMatmul) { m.TypeA, m.TypeB = R8FE5M2, R8FE5M2 }, fp8TN, "not both E5M2"},
		{"fp8 align", func(m *LtMatmul) { m.Align = [4]int{16, 8, 16, 16} }, fp8TN, "aligned to 16"},
		{"fp8 int output", func(m *LtMatmul) { m.TypeC, m.TypeD = R32I, R32I }, fp8TN, "R32F, R16BF or R16F"},
		{"ld", func(m *LtMatmul) { m.LDC = 8 }, fp8TN, "ldc"},
		{"alignment value", func(m *LtMatmul) { m.Align[0] = 12 }, fp8TN, "power of two"},
	}
	h := &LtHandle{}
	for _, c := range cases {
		m := c.base
		c.edit(&m)
		_, err := h.Plan(m)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidArgument about %q", c.name, err, c.want)
		}
	}
	for _, m := range []LtMatmul{int8TN, fp8TN} {
		if _, err := h.Plan(m); !errors.Is(err, ErrDestroyed) {
			t.Errorf("a valid description on no handle: %v, want ErrDestroyed", err)
		}
	}
}
