package array

import (
	"testing"
)

// TestEmbeddingGPU: the embedding gather and its scatter-add backward at
// the benchmark's size (the row kernels with 128-bit words) match the CPU
// backend on the same random inputs; duplicate tokens accumulate.
func TestEmbeddingGPU(t *testing.T) {
	g := testGPU(t)
	c := CPU()
	const vocab, dim, toks = 50304, 768, 16384
	r := c.NewRNG(11)
	emb := r.Normal(Float32, 0, 1, vocab, dim).Eval()
	tok := r.Integers(Int64, -vocab, vocab, toks).Eval()
	gr := r.Normal(Float32, 0, 1, toks, dim).Eval()
	gemb, gtok, ggr := emb.To(g.Device()), tok.To(g.Device()), gr.To(g.Device())
	// Poison what the GPU results will be allocated from.
	g.Full(Float32, 1e30, vocab, dim).Eval().Close()
	want := readHost(t, emb.Take(tok, 0))
	checkHost(t, "gather", readHost(t, gemb.Take(gtok, 0)), []int{toks, dim}, want.v, 0)
	// A row that is not 16-byte aligned takes narrower words.
	odd := emb.Slice(All, S(1, 766))
	checkHost(t, "gather of an offset view", readHost(t, odd.To(g.Device()).Take(gtok, 0)), []int{toks, 765}, readHost(t, odd.Take(tok, 0)).v, 0)
	wantAdd := readHost(t, ZerosLike(emb).IndexAdd(0, tok.AsType(Int64), gr))
	checkHost(t, "scatter-add", readHost(t, ZerosLike(gemb).IndexAdd(0, gtok, ggr)), []int{vocab, dim}, wantAdd.v, 1e-5)
	tok32 := gtok.AsType(Int32)
	checkHost(t, "gather by int32", readHost(t, gemb.Take(tok32, 0)), []int{toks, dim}, want.v, 0)
}
