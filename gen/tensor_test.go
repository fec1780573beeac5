package gen

import (
	"regexp"
	"strings"
	"testing"
)

// TestClangTensorPTX compiles the tensor test kernels with clang-16 and
// checks that the PTX holds each new instruction with the operands the PTX
// ISA gives it: register kinds and counts (%f float32, %r 32-bit, %rs
// 16-bit, %rd 64-bit). clang passes inline PTX through unchecked, so this
// is the check short of ptxas, which runs on the GPU machine (NVRTC).
func TestClangTensorPTX(t *testing.T) {
	ptx := ptxOf(t, readFile(t, "testdata/kernels/tensor/zz_gocu_tensor.cu"))
	f4, r4, r2 := `\{%f\d+, %f\d+, %f\d+, %f\d+\}`, `\{%r\d+, %r\d+, %r\d+, %r\d+\}`, `\{%r\d+, %r\d+\}`
	want := map[string]string{
		"Tile": strings.Join([]string{
			`mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32 ` + f4 + `, ` + r4 + `, ` + r2 + `, ` + f4 + `;`,
			`mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32 ` + f4 + `, ` + r4 + `, ` + r2 + `, ` + f4 + `;`,
			`mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32 ` + f4 + `, ` + r4 + `, ` + r2 + `, ` + f4 + `;`,
			`ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 ` + r4 + `, \[%r\d+\];`,
			`ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16 ` + r4 + `, \[%r\d+\];`,
			`ldmatrix\.sync\.aligned\.m8n8\.x2\.shared\.b16 ` + r2 + `, \[%r\d+\];`,
			`ldmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared\.b16 ` + r2 + `, \[%r\d+\];`,
			`ldmatrix\.sync\.aligned\.m8n8\.x1\.shared\.b16 \{%r\d+\}, \[%r\d+\];`,
			`ldmatrix\.sync\.aligned\.m8n8\.x1\.trans\.shared\.b16 \{%r\d+\}, \[%r\d+\];`,
			`cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16;`,
			`cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16, %r\d+;`,
			`cp\.async\.commit_group;`,
			`cp\.async\.wait_group 1;`,
			`cp\.async\.wait_group 0;`,
		}, "\n"),
		"FastExp2": `ex2\.approx\.ftz\.f32 %f\d+, %f\d+;`,
		"WGTile": strings.Join([]string{
			`fence\.proxy\.async\.shared::cta;`,
			`wgmma\.fence\.sync\.aligned;`,
			`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1, 0, 1;`,
			`wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16 \{(%f\d+, ){31}%f\d+\}, %rd\d+, %rd\d+, p, 1, 1, 0, 0;`,
			`wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{(%f\d+, ){63}%f\d+\}, ` + r4 + `, %rd\d+, p, 1, 1, 1;`,
			`wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16 \{(%f\d+, ){31}%f\d+\}, ` + r4 + `, %rd\d+, p, 1, 1, 0;`,
			`wgmma\.commit_group\.sync\.aligned;`,
			`wgmma\.wait_group\.sync\.aligned 1;`,
			`wgmma\.wait_group\.sync\.aligned 0;`,
		}, "\n"),
		"NamedBar": strings.Join([]string{
			`setmaxnreg\.dec\.sync\.aligned\.u32 24;`,
			`setmaxnreg\.inc\.sync\.aligned\.u32 240;`,
			`bar\.arrive %r\d+, %r\d+;`,
			`bar\.sync %r\d+, %r\d+;`,
		}, "\n"),
		"BulkSum": strings.Join([]string{
			`mbarrier\.init\.shared::cta\.b64 \[%r\d+\], %r\d+;`,
			`fence\.mbarrier_init\.release\.cluster;`,
			`mbarrier\.try_wait\.parity\.shared::cta\.b64 p, \[%r\d+\], %r\d+;`,
			`mbarrier\.arrive\.expect_tx\.shared::cta\.b64 %rd\d+, \[%r\d+\], %r\d+;`,
			`cp\.async\.bulk\.shared::cluster\.global\.mbarrier::complete_tx::bytes \[%r\d+\], \[%rd\d+\], %r\d+, \[%r\d+\];`,
			`mbarrier\.arrive\.shared::cta\.b64 %rd\d+, \[%r\d+\];`,
		}, "\n"),
		"Convert": strings.Join([]string{
			`cvt\.rn\.f16\.f32 %rs\d+, %f\d+;`,
			`cvt\.f32\.f16 %f\d+, %rs\d+;`,
			`cvt\.rn\.bf16\.f32 %rs\d+, %f\d+;`,
			`cvt\.rn\.satfinite\.e4m3x2\.f32 %rs\d+, %f\d+, %f\d+;`,
			`cvt\.rn\.satfinite\.e5m2x2\.f32 %rs\d+, %f\d+, %f\d+;`,
			`cvt\.rn\.f16x2\.e4m3x2 %r\d+, %rs\d+;`,
			`cvt\.rn\.f16x2\.e5m2x2 %r\d+, %rs\d+;`,
			`cvt\.rn\.bf16x2\.f32 %r\d+, %f\d+, %f\d+;`,
			`cvt\.rn\.f16x2\.f32 %r\d+, %f\d+, %f\d+;`,
			`cvt\.rna\.tf32\.f32 %r\d+, %f\d+;`,
		}, "\n"),
	}
	for entry, res := range want {
		body := ptxFunc(t, ptx, entry)
		for _, re := range strings.Split(res, "\n") {
			if !regexp.MustCompile(re).MatchString(body) {
				t.Errorf("%s: no instruction matching %s in the PTX", entry, re)
			}
		}
	}
	if t.Failed() {
		t.Log(ptxFunc(t, ptx, "Tile"))
	}
}
