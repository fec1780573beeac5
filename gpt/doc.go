// Package gpt is a GPT in GPT-2's shape, trained from scratch with
// packages grad and nn: the model of nanoGPT and llm.c.
//
//	rng := array.On(dev).NewRNG(1)
//	m, err := gpt.New(rng, gpt.Bytes()) // 6 layers, 384 wide, context 256, bytes
//	opt := nn.NewAdamW(m.Params(), 1e-3, 0.1)
//	for ids, targets := range batches { // (B, T) tokens and the tokens after them
//		loss := m.Loss(ids, targets)
//		if err := loss.Backward(); err != nil { ... }
//		if err := opt.Step(); err != nil { ... }
//		opt.ZeroGrad()
//	}
//	out, err := m.Generate(prompt, gpt.GenerateOptions{Tokens: 200, Temperature: 0.8, TopK: 40})
//
// # The model
//
// Tokens and their positions are embedded (learned positions, as GPT-2),
// then Layers blocks each add causal self-attention of their LayerNorm'd
// input, then an MLP (4x wide, GELU in its tanh form) of theirs, to the
// residual stream; a final LayerNorm and a head that shares the token
// embedding's weights give the logits. Weights start as GPT-2's: normal
// with deviation 0.02, the residual projections scaled by 1/√(2·Layers).
//
// Parameters are named as the state_dict of train_gpt.py's PyTorch model,
// the peer of the benchmarks ("wte.weight", "blocks.3.fc.bias"), so that
// checkpoints (safetensors) move between the two; the configuration
// travels in the checkpoint's metadata.
//
// Model.Compute selects mixed precision: the products of the linear
// layers, the head and attention in bfloat16 on the tensor cores, with
// float32 master weights, residual stream, layer norms, softmax and loss,
// as torch.autocast.
//
// # Generation
//
// Generate continues a prompt with a cache of keys and values, so each new
// token costs one position per layer; temperature and top-k shape the
// distribution, and a seed fixes the draws. A byte model may emit bytes
// that are not UTF-8: Text and TextWriter turn its tokens into valid text.
package gpt
