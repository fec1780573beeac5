package gpt

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/safetensors"
)

// torchGPT is train_gpt.py's model, as written there, and a script that
// loads gocu's checkpoint into it, computes its logits and loss on the
// batch gocu wrote, and saves a model of its own with save_model.
const torchGPT = `
import sys, torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file, save_file, load_model, save_model

class Block(nn.Module):
    def __init__(s, d, h):
        super().__init__()
        s.h = h
        s.ln1, s.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        s.qkv, s.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        s.fc, s.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(s, x):
        B, T, C = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, s.h, C // s.h).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + s.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + s.out(F.gelu(s.fc(s.ln2(x)), approximate="tanh"))

class GPT(nn.Module):
    def __init__(s, L, h, d, ctx, vocab):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        s.blocks = nn.ModuleList([Block(d, h) for _ in range(L)])
        s.lnf = nn.LayerNorm(d)
        s.head = nn.Linear(d, vocab, bias=False)
        s.head.weight = s.wte.weight  # tied, as GPT-2

    def forward(s, idx, tgt):
        x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in s.blocks:
            x = b(x)
        logits = s.head(s.lnf(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), tgt.view(-1))

    def logits(s, idx):
        x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in s.blocks:
            x = b(x)
        return s.head(s.lnf(x))

d = sys.argv[1]
L, h, dim, ctx, vocab = (int(a) for a in sys.argv[2:7])
batch = load_file(d + "/batch.safetensors")
idx, tgt = batch["ids"], batch["targets"]
m = GPT(L, h, dim, ctx, vocab)
load_model(m, d + "/gocu.safetensors")
with torch.no_grad():
    out = {"logits": m.logits(idx).contiguous(), "loss": m(idx, tgt).reshape(1)}
torch.manual_seed(7)
m2 = GPT(L, h, dim, ctx, vocab)
save_model(m2, d + "/torch.safetensors")
with torch.no_grad():
    out["logits2"] = m2.logits(idx).contiguous()
save_file(out, d + "/out.safetensors")
`

// TestTorchCheckpoints moves checkpoints between gocu and train_gpt.py's
// PyTorch model, both ways, and compares logits and loss. It needs python3
// with torch and safetensors (the GPU machine has them), and skips
// without.
func TestTorchCheckpoints(t *testing.T) {
	if err := exec.Command("python3", "-c", "import torch, safetensors.torch").Run(); err != nil {
		t.Skipf("needs python3 with torch and safetensors: %v", err)
	}
	cfg := Config{Layers: 2, Heads: 2, Dim: 32, Context: 16, Vocab: 256, Bias: true}
	m := randomModel(t, cfg)
	dir := t.TempDir()
	if err := m.Save(filepath.Join(dir, "gocu.safetensors"), nil); err != nil {
		t.Fatal(err)
	}
	cpu := array.CPU()
	all := tokens(cpu, 4, cfg.Vocab, 3, cfg.Context+1)
	ids, tgt := all.Slice(array.All, array.S(0, cfg.Context)).Copy(), all.Slice(array.All, array.S(1, cfg.Context+1)).Copy()
	if err := safetensors.WriteFile(filepath.Join(dir, "batch.safetensors"), []safetensors.Tensor{{Name: "ids", Array: ids}, {Name: "targets", Array: tgt}}, nil); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "gpt.py")
	if err := os.WriteFile(script, []byte(torchGPT), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{script, dir}
	for _, v := range []int{cfg.Layers, cfg.Heads, cfg.Dim, cfg.Context, cfg.Vocab} {
		args = append(args, strconv.Itoa(v))
	}
	cmd := exec.Command("python3", args...)
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3 %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	res, err := safetensors.ReadFile(filepath.Join(dir, "out.safetensors"), nil)
	if err != nil {
		t.Fatal(err)
	}
	compare := func(what string, got []float64, want *array.Array) {
		t.Helper()
		w, err := want.AsType(array.Float64).Float64s()
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != len(got) {
			t.Fatalf("%s: %d values from torch, %d from gocu", what, len(w), len(got))
		}
		worst := 0.0
		for i := range w {
			worst = max(worst, math.Abs(got[i]-w[i])/max(1, math.Abs(w[i])))
		}
		if worst > 1e-4 {
			t.Errorf("%s: gocu and torch differ by %.3g", what, worst)
		}
	}
	compare("logits of gocu's checkpoint", logits(t, m, ids), res.Get("logits"))
	var loss float64
	grad.NoGrad(func() { loss, err = m.Loss(ids, tgt).Item() })
	if err != nil {
		t.Fatal(err)
	}
	compare("loss", []float64{loss}, res.Get("loss"))
	// Back: torch's save_model keeps the tied weight under one name.
	m2, err := New(cpu.NewRNG(2), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.LoadFile(filepath.Join(dir, "torch.safetensors")); err != nil {
		t.Fatal(err)
	}
	compare("logits of torch's checkpoint", logits(t, m2, ids), res.Get("logits2"))
}
