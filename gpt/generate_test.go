package gpt

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

func randomModel(t testing.TB, cfg Config) *Model {
	t.Helper()
	m, err := New(array.CPU().NewRNG(1), cfg)
	if err != nil {
		t.Fatal(err)
	}
	randomize(t, m, 9, 0.5) // sharper, more varied predictions than GPT-2's init
	return m
}

// TestCacheEqualsRecompute checks that generating with the key-value
// cache gives the tokens and logits of recomputing every window, also
// past the context, where the window slides.
func TestCacheEqualsRecompute(t *testing.T) {
	m := randomModel(t, small)
	// Logits: the cache fed one token at a time against Forward.
	ids := []int{3, 1, 4, 1, 5, 9}
	var full *grad.Var
	grad.NoGrad(func() { full = m.Forward(grad.Const(array.FromSlice(toInt64(ids), 1, len(ids)))) })
	want, err := full.Value().AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	c := &cache{layers: make([]layerCache, len(m.Blocks))}
	for i := range ids {
		var got []float64
		grad.NoGrad(func() { got, err = m.lastLogits(ids[i:i+1], c) })
		if err != nil {
			t.Fatal(err)
		}
		for v, g := range got {
			if w := want[i*small.Vocab+v]; math.Abs(g-w) > 1e-5*max(1, math.Abs(w)) {
				t.Fatalf("position %d, token %d: cached logit %g, full %g", i, v, g, w)
			}
		}
	}
	if _, err := m.lastLogits([]int{1}, c); err == nil {
		t.Error("a token past a full cache: no error")
	}
	// Tokens: 3 prompt tokens and 20 more, past the context of 6.
	for _, o := range []GenerateOptions{{Tokens: 20, Temperature: 1, Seed: 3}, {Tokens: 20, Temperature: 0.7, TopK: 4, Seed: 4}, {Tokens: 20}} {
		a, err := m.Generate([]int{2, 7, 1}, o)
		if err != nil {
			t.Fatal(err)
		}
		o.NoCache = true
		b, err := m.Generate([]int{2, 7, 1}, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != 20 || !slices.Equal(a, b) {
			t.Errorf("%+v: with the cache %v, recomputed %v", o, a, b)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	m := randomModel(t, small)
	gen := func(seed uint64) []int {
		out, err := m.Generate([]int{1}, GenerateOptions{Tokens: 30, Temperature: 1, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, c := gen(1), gen(1), gen(2)
	if !slices.Equal(a, b) {
		t.Errorf("seed 1 twice: %v and %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 give the same %v", a)
	}
	var got []int
	out, err := m.Generate([]int{1}, GenerateOptions{Tokens: 30, Temperature: 1, Seed: 1, Emit: func(tok int) error { got = append(got, tok); return nil }})
	if err != nil || !slices.Equal(out, a) || !slices.Equal(got, a) {
		t.Errorf("Emit saw %v, Generate returned %v (%v), want %v", got, out, err, a)
	}
	stop := errors.New("stop")
	out, err = m.Generate([]int{1}, GenerateOptions{Tokens: 30, Temperature: 1, Seed: 1, Emit: func(int) error { return stop }})
	if !errors.Is(err, stop) || len(out) != 1 {
		t.Errorf("Emit failing: %v, %d tokens", err, len(out))
	}
}

// TestSample checks the distribution sample draws from.
func TestSample(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := []float64{0, math.Log(2), math.Log(4), -1e9, math.Log(4)}
	count := make([]int, len(logits))
	const n = 40000
	for range n {
		count[sample(logits, 1, 0, r)]++
	}
	for i, want := range []float64{1.0 / 11, 2.0 / 11, 4.0 / 11, 0, 4.0 / 11} {
		if got := float64(count[i]) / n; math.Abs(got-want) > 0.01 {
			t.Errorf("temperature 1: token %d drawn %.4f of the time, want %.4f", i, got, want)
		}
	}
	// Temperature 0.5 squares the odds; top-2 keeps tokens 2 and 4.
	clear(count)
	for range n {
		count[sample(logits, 0.5, 0, r)]++
	}
	if got := float64(count[1]) / n; math.Abs(got-4.0/37) > 0.01 {
		t.Errorf("temperature 0.5: token 1 drawn %.4f of the time, want %.4f", got, 4.0/37)
	}
	clear(count)
	for range n {
		count[sample(logits, 1, 2, r)]++
	}
	if count[0]+count[1]+count[3] != 0 || math.Abs(float64(count[2])/n-0.5) > 0.01 {
		t.Errorf("top-2: %v", count)
	}
	if got := sample(logits, 0, 0, r); got != 2 {
		t.Errorf("greedy: token %d, want 2 (the first of the largest)", got)
	}
}

func TestGenerateErrors(t *testing.T) {
	m := randomModel(t, small)
	for _, c := range []struct {
		prompt []int
		o      GenerateOptions
		want   string
	}{
		{nil, GenerateOptions{Tokens: 1}, "empty prompt"},
		{[]int{11}, GenerateOptions{Tokens: 1}, "outside [0, 11)"},
		{[]int{-1}, GenerateOptions{Tokens: 1}, "outside [0, 11)"},
		{[]int{1}, GenerateOptions{Tokens: -1}, "-1 tokens"},
		{[]int{1}, GenerateOptions{Tokens: 1, Temperature: -1}, "temperature -1"},
		{[]int{1}, GenerateOptions{Tokens: 1, Temperature: math.Inf(1)}, "temperature +Inf"},
		{[]int{1}, GenerateOptions{Tokens: 1, TopK: -2}, "top-k -2"},
	} {
		_, err := m.Generate(c.prompt, c.o)
		if !errors.Is(err, ErrGenerate) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %+v: %v, want ErrGenerate saying %q", c.prompt, c.o, err, c.want)
		}
	}
	// A prompt longer than the context keeps its last Context tokens.
	if out, err := m.Generate([]int{1, 2, 3, 4, 5, 6, 7, 8, 9}, GenerateOptions{Tokens: 2}); err != nil || len(out) != 2 {
		t.Errorf("a long prompt: %v, %v", out, err)
	}
}

// TestTextIsValidUTF8 checks that byte tokens, a model's output, always
// print as valid UTF-8, and that valid text passes unchanged.
func TestTextIsValidUTF8(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		toks := make([]int, r.IntN(40))
		for i := range toks {
			toks[i] = r.IntN(256)
		}
		if s := Text(toks); !utf8.ValidString(s) {
			t.Fatalf("Text(%v) = %q: invalid UTF-8", toks, s)
		}
	}
	valid := "func main() { fmt.Println(\"héllo, 世界 🙂\") }"
	var toks []int
	for _, b := range []byte(valid) {
		toks = append(toks, int(b))
	}
	if s := Text(toks); s != valid {
		t.Errorf("Text of valid UTF-8: %q", s)
	}
	if s := Text([]int{'a', 0xe4, 0xb8, 'b', 0xff, 300}); s != "a\uFFFD\uFFFDb\uFFFD\uFFFD" {
		t.Errorf("Text of broken UTF-8: %q", s)
	}
	// Escape sequences do not reach the terminal; tabs and newlines do.
	if s := Text([]int{0x1b, '[', '2', 'J', '\t', '\r', '\n', 0x7f, 0xc2, 0x9b, 0}); s != "\uFFFD[2J\t\r\n\uFFFD\uFFFD\uFFFD" {
		t.Errorf("Text of control characters: %q", s)
	}
	// A character split across tokens is written once complete.
	var b strings.Builder
	w := NewTextWriter(&b)
	w.WriteToken(0xe4)
	w.WriteToken(0xb8)
	if b.Len() != 0 {
		t.Errorf("an incomplete character was written: %q", b.String())
	}
	w.WriteToken(0x96)
	if b.String() != "世" {
		t.Errorf("got %q, want 世", b.String())
	}
	w.WriteToken(0xe4)
	w.Flush()
	if b.String() != "世\uFFFD" {
		t.Errorf("after Flush: %q", b.String())
	}
}

// TestSampleIsValidUTF8 generates from a model with random weights,
// whose bytes are noise, and checks the text.
func TestSampleIsValidUTF8(t *testing.T) {
	cfg := small
	cfg.Vocab = 256
	m := randomModel(t, cfg)
	out, err := m.Generate([]int{'p'}, GenerateOptions{Tokens: 100, Temperature: 1.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(Text(out)) {
		t.Errorf("invalid UTF-8 from %v", out)
	}
	if utf8.Valid(bytesOf(out)) {
		t.Log("the raw bytes happened to be valid UTF-8 too")
	}
}

func bytesOf(toks []int) []byte {
	b := make([]byte, len(toks))
	for i, t := range toks {
		b[i] = byte(t)
	}
	return b
}
