// Package gpttrain trains the GPT of package gpt on the Go source corpus
// of package gosrc: what `gocu gpt train` runs. A run samples random
// windows, takes AdamW steps under a warm-up and cosine schedule with
// gradient clipping, prints progress (loss, tokens per second, model
// FLOP utilisation), evaluates on fixed validation windows, writes
// checkpoints and the loss curve.
//
// A step's peak of device memory is about its live set (Live): the
// parameters, gradients and optimiser moments, the activations the
// backward pass needs and the classifier's logits. The backward pass frees
// the forward pass as it goes, and nothing a step made outlives it.
package gpttrain
