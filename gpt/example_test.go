package gpt_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/nn"
)

// Train a tiny GPT to continue a line of Go, then sample from it.
func Example() {
	dev := array.CPU()
	m, err := gpt.New(dev.NewRNG(1), gpt.Tiny())
	if err != nil {
		fmt.Println(err)
		return
	}
	text := []byte("func main() { fmt.Println(\"hello, world\") }\n")
	row := make([]int64, 33)
	for i := range row {
		row[i] = int64(text[i])
	}
	all := array.FromSlice(row, 1, 33)
	ids, targets := all.Slice(array.All, array.S(0, 32)), all.Slice(array.All, array.S(1, 33))
	opt := nn.NewAdamW(m.Params(), 1e-2, 0)
	var first, last float64
	for step := range 40 {
		loss := m.Loss(ids, targets)
		l, err := loss.Item()
		if err != nil {
			fmt.Println(err)
			return
		}
		if step == 0 {
			first = l
		}
		last = l
		if err := loss.Backward(); err != nil {
			fmt.Println(err)
			return
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
		opt.ZeroGrad()
	}
	fmt.Printf("%d parameters; loss %.1f, then below 0.5: %v\n", m.Config.Params(), first, last < 0.5)
	out, err := m.Generate([]int{'f', 'u', 'n', 'c'}, gpt.GenerateOptions{Tokens: 10, Temperature: 0.5, TopK: 5, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(out), "tokens")
	// Output:
	// 120576 parameters; loss 5.5, then below 0.5: true
	// 10 tokens
}

func ExamplePreset() {
	for _, name := range gpt.PresetNames() {
		c, _ := gpt.Preset(name)
		fmt.Printf("%-5s %2d layers %4d wide, context %4d, vocabulary %5d: %.1fM parameters\n", name, c.Layers, c.Dim, c.Context, c.Vocab, float64(c.Params())/1e6)
	}
	// Output:
	// bytes  6 layers  384 wide, context  256, vocabulary   256: 10.8M parameters
	// gpt2  12 layers  768 wide, context 1024, vocabulary 50304: 124.5M parameters
	// tiny   2 layers   64 wide, context   64, vocabulary   256: 0.1M parameters
}
