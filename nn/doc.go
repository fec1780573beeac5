// Package nn builds and trains neural networks on package grad: layers,
// losses, initialisation, optimisers and checkpoints, after PyTorch's
// torch.nn and torch.optim.
//
//	rng := array.On(dev).NewRNG(1) // the seed fixes the initial weights on every device
//	model := nn.NewSequential(
//		nn.NewLinear(rng, 784, 512), nn.ReLU{},
//		nn.NewLinear(rng, 512, 512), nn.ReLU{},
//		nn.NewLinear(rng, 512, 10))
//	opt := nn.NewAdam(nn.Params(model), 1e-3)
//	for x, y := range batches {
//		loss := nn.CrossEntropy(model.Forward(grad.Const(x)), y)
//		if err := loss.Backward(); err != nil { ... }
//		if err := opt.Step(); err != nil { ... }
//		opt.ZeroGrad()
//	}
//
// # Modules
//
// A Module maps a Var to a Var and names its parameters as PyTorch's
// state_dict does ("0.weight", "2.bias"), so that checkpoints move between
// the two (SaveFile, LoadFile: the safetensors format). The layers are
// Linear (weight (out, in), as PyTorch's), Embedding (padding_idx),
// MultiheadAttention (torch's fused in_proj_weight, batch first), ReLU,
// GELU (exact and tanh), SiLU, Tanh, Sigmoid, Softmax, Dropout, LayerNorm,
// RMSNorm, BatchNorm (NewBatchNorm1d, NewBatchNorm2d), Conv2d, MaxPool2d
// and Sequential; Train switches Dropout, BatchNorm and
// MultiheadAttention between training and evaluation.
// ScaledDotProductAttention is torch's F.scaled_dot_product_attention
// (causal and key-padding masks, dropout, scale), with the softmax in
// float32 for half-precision inputs.
// BatchNorm's running statistics are buffers: Vars without a gradient,
// named as in torch's state_dict so that checkpoints carry them. Layers are
// compositions of grad's operations, except Linear, Embedding and
// CrossEntropy, which are recorded as one operation each with a
// hand-written gradient: the weight's gradient comes out in the weight's
// own layout from one product (Embedding's from one scatter-add), and
// cross-entropy's gradient is one fused elementwise pass.
//
// The convolutions, Conv1d and Conv2d (rectangular kernels, stride,
// padding, dilation, groups; torch's weight layout), gather every window
// of the input into columns with one indexed gather (im2col) and multiply
// them with the weight in one batched product, on every device; the
// gradient is a product and a scatter-add. MaxPool2d and AvgPool2d reduce
// the same windows; AdaptiveAvgPool2d is two products with averaging
// matrices.
//
// Initialisation follows PyTorch's defaults (Linear and Conv2d: uniform in
// ±1/√fan_in for weights and biases; LayerNorm: ones and zeros) with the
// generator explicit: layers draw from the *array.RNG they are given, whose
// Philox stream is the same on every device, so one seed builds the same
// model on the CPU and on a GPU. Dropout draws its masks from its own
// generator the same way.
//
// # Losses
//
// CrossEntropy takes logits and integer labels and computes the mean
// cross-entropy from the log-softmax (stable for any logits) and refuses
// a label out of range (on a GPU, without a wait, as a NaN loss); MSE is
// the mean squared error. CrossEntropyWith adds torch's options (class
// weights, an ignored label, label smoothing, the reduction: mean, sum or
// none) and (N, C, d1, ...) logits; NLLLoss takes log-probabilities with
// the same options. BCE (probabilities, logs clamped at -100 as torch's)
// and BCEWithLogits (stable for any logits, with PosWeight) are the
// binary cross-entropies. Each is one recorded operation whose gradient
// is one fused elementwise pass.
//
// # Optimisers
//
// SGD (momentum, dampening, Nesterov, weight decay), Adam and AdamW follow
// torch.optim's update rules (the tests compare them with a float64
// transcription of PyTorch's algorithms). A step is fused: on a GPU, two
// kernel launches update every parameter of a dtype (up to 32 per launch)
// and its moments in one pass over memory, CUDA C compiled at run time;
// on the CPU, one pass per parameter on all cores, with the same
// arithmetic. Unfused selects array expressions instead (one pass per
// moment and parameter: three per parameter for Adam, so 18 launches for
// the 784-512-512-10 MLP against 2), which is also the path for parameters
// whose value or gradient is a strided view. The fused updates flush
// moments below the smallest normal number to zero: a moment of a zero
// gradient decays there and stays, and CPUs compute with subnormal numbers
// many times slower. Optimizer.ZeroGrad closes the gradients it clears, so
// their memory returns at once.
//
// Gradients accumulate: Backward adds into the gradients already there,
// so k micro-batches whose losses are scaled by 1/k, each followed by
// Backward, then one Step and ZeroGrad, train as one batch k times larger.
//
// SetWeightDecay gives some parameters their own weight decay, as
// torch.optim's parameter groups; DecayGroups splits a model as GPT
// training does (matrices decayed, biases and norms not). SaveState and
// LoadState write and read an optimiser's moments, step count and
// hyperparameters (safetensors, torch's state_dict names), so that with
// Save, Load and Scheduler.SetSteps a resumed run continues bit for bit.
//
// A Scheduler sets an optimiser's learning rate step by step from a
// Schedule (StepLR, CosineAnnealingLR, LinearLR, LambdaLR, WarmupCosine,
// torch's closed forms). ClipGradNorm clips gradients by their total norm
// as torch's clip_grad_norm_, without reading the norm back.
//
// # Mixed precision
//
// Autocast runs a model's products (Linear, MultiheadAttention) in
// bfloat16 or float16 with float32 master weights, float32 results and
// gradients, and so float32 norms, softmax and losses: torch.autocast's
// policy. A GradScaler scales the loss for float16, unscales the
// gradients, skips steps that overflowed and adapts the scale, as
// torch.amp.GradScaler. LinearHalf keeps a product's result in the half
// type, and LayerNorm.Out and GELU.Out set their results' dtype, so that
// a transformer's activations stay bfloat16 between products, as under
// torch.autocast.
//
// # Fused kernels
//
// On a GPU, LayerNorm, GELU and CrossEntropy (default options) run fused
// kernels for float32 and bfloat16 operands, with float32 arithmetic: one
// pass forward and one or two backward, CUDA C compiled at run time, where
// the composed operations take ten or more. The classifier computes the
// logsumexp, the loss and later the gradient from the logits alone, never
// storing the probabilities. The environment variable GOCU_NOFUSE selects
// the composed operations (Fused reports which run), to compare the two.
//
// # CUDA graphs
//
// A training step (forward, backward, Step) captured with array's
// Maker.Capture replays as one graph launch. The optimisers are made for
// it: Adam's step count and the learning rate live in device memory, so a
// replay applies the right bias correction and SetLR between replays (a
// schedule) takes effect; the optimiser's state must stay alive while the
// graph is replayed (keep the optimiser). Dropout's mask is drawn at the
// capture and repeats on every replay.
package nn
