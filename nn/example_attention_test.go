package nn_test

import (
	"bytes"
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// Embed byte tokens and attend to them causally, as a GPT block does.
func ExampleMultiheadAttention() {
	rng := array.CPU().NewRNG(1)
	emb := nn.NewEmbedding(rng, 256, 32)
	attn := nn.NewMultiheadAttention(rng, 32, 4)
	attn.Causal = true
	tokens := array.FromSlice([]byte("package main"), 1, 12) // (B, S)
	x := emb.Forward(grad.Const(tokens))                     // (B, S, 32)
	y := attn.Forward(x)
	fmt.Println(y.Shape(), y.Err())
	for _, n := range attn.Named() {
		fmt.Println(n.Name, n.Var.Shape())
	}
	// Output:
	// [1 12 32] <nil>
	// in_proj_weight [96 32]
	// in_proj_bias [96]
	// out_proj.weight [32 32]
	// out_proj.bias [32]
}

// Each query attends to the keys before it; with all keys equal, each
// output is the mean of the values it sees.
func ExampleScaledDotProductAttention() {
	q := grad.Const(array.Zeros(array.Float32, 4, 2))
	v := grad.Const(array.FromSlice([]float32{0, 0, 4, 4, 8, 8, 12, 12}, 4, 2))
	y := nn.ScaledDotProductAttention(q, q, v, &nn.AttentionOptions{Causal: true})
	fmt.Println(y.Value())
	// Output:
	// [[0. 0.]
	//  [2. 2.]
	//  [4. 4.]
	//  [6. 6.]]
}

// AdamW that decays the matrices and leaves biases and norms alone, as
// GPT training does.
func ExampleDecayGroups() {
	rng := array.CPU().NewRNG(1)
	model := nn.NewSequential(nn.NewLinear(rng, 8, 8), nn.NewLayerNorm(array.CPU(), 8), nn.NewLinear(rng, 8, 2))
	opt := nn.NewAdamW(nn.Params(model), 6e-4, 0.1)
	decay, noDecay := nn.DecayGroups(model)
	if err := opt.SetWeightDecay(noDecay, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(decay), "decayed,", len(noDecay), "not")
	// Output: 2 decayed, 4 not
}

// Train with float16 products and a loss scale, as torch.autocast with a
// GradScaler: the weights, the norms and the loss stay float32.
func ExampleGradScaler() {
	rng := array.CPU().NewRNG(1)
	model := nn.NewSequential(nn.NewLinear(rng, 4, 16), nn.NewLayerNorm(array.CPU(), 16), nn.GELU{}, nn.NewLinear(rng, 16, 2))
	if err := nn.Autocast(model, array.Float16); err != nil {
		fmt.Println(err)
		return
	}
	opt := nn.NewAdam(nn.Params(model), 1e-2)
	scaler := nn.NewGradScaler()
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 8, 4))
	y := array.FromSlice([]int64{0, 1, 1, 0, 1, 0, 0, 1})
	for range 3 {
		loss := scaler.Scale(nn.CrossEntropy(model.Forward(x), y))
		if err := loss.Backward(); err != nil {
			fmt.Println(err)
			return
		}
		stepped, err := scaler.Step(opt)
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := scaler.Update(); err != nil {
			fmt.Println(err)
			return
		}
		opt.ZeroGrad()
		fmt.Println(stepped, scaler.ScaleFactor)
	}
	// Output:
	// true 65536
	// true 65536
	// true 65536
}

// Save the optimiser with the model, and resume both later exactly.
func ExampleAdam_SaveState() {
	rng := array.CPU().NewRNG(1)
	model := nn.NewLinear(rng, 3, 2)
	opt := nn.NewAdamW(nn.Params(model), 1e-3, 0.1)
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 4, 3))
	for range 5 {
		if err := model.Forward(x).Square().Mean().Backward(); err != nil {
			fmt.Println(err)
			return
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
		opt.ZeroGrad()
	}
	var weights, state bytes.Buffer // files, in a real run
	if err := nn.Save(&weights, model, nil); err != nil {
		fmt.Println(err)
		return
	}
	if err := opt.SaveState(&state); err != nil {
		fmt.Println(err)
		return
	}

	resumed := nn.NewLinear(array.CPU().NewRNG(2), 3, 2)
	ropt := nn.NewAdamW(nn.Params(resumed), 0, 0)
	if _, err := nn.Load(&weights, resumed); err != nil {
		fmt.Println(err)
		return
	}
	if err := ropt.LoadState(&state); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ropt.Steps(), ropt.LR, ropt.WeightDecay)
	// Output: 5 0.001 0.1
}
