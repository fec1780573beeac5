// Package gpttrain trains the GPT of package gpt on the Go source corpus
// of package gosrc: what `gocu gpt train` runs. A run samples random
// windows, takes AdamW steps under a warm-up and cosine schedule with
// gradient clipping, prints progress (loss, tokens per second, model
// FLOP utilisation), evaluates on fixed validation windows, writes
// checkpoints and the loss curve.
//
// A step's peak of device memory is about its live set (Live): the
// parameters, gradients and optimiser moments, the activations the
// backward pass needs and the classifier's logits. On one device the
// backward pass frees the forward pass as it goes (grad.Var.BackwardFree),
// and nothing a step made outlives it. Data-parallel steps use Backward:
// DDP's hooks make arrays during the pass, which BackwardFree would free.
//
// # Data-parallel training
//
// With Config.Devices (one process driving several devices) or
// Config.Comm (this process's rank of a job, from dist.Join) a run keeps a
// model replica on each rank. Every rank draws the same global batch of
// Batch windows from the same seed and trains on its rows (dist.Split);
// dist.DDP averages the gradients in buckets while the backward pass
// runs, so that clipping sees the norm of the averaged gradients, the
// global one, and every replica takes the same AdamW step. When Batch does
// not divide evenly each rank's loss is weighted by its share, so that
// the average is still the gradient of the whole batch's mean loss.
// Config.ZeRO shards the optimiser state instead (dist.ZeRO1): the
// gradients are reduce-scattered, each rank updates its shard (weight
// decay masked per element as the decay groups say, clipping by
// ZeRO1.MaxNorm) and the parameters are all-gathered. Global rank 0
// evaluates, checkpoints, plots and samples. Decisions taken from clocks
// (the steps that fit in Time, Stop) are rank 0's, broadcast; Stop is
// checked at the progress reports. A CUDA graph is not used.
//
// Up to float rounding, 2 or more ranks reproduce one device's loss curve
// at the same global batch, and one rank reproduces it exactly; the tests
// check both on the CPU stand-in of package dist.
package gpttrain
