// Package gpttrain trains the GPT of package gpt on the Go source corpus
// of package gosrc: what `gocu gpt train` runs. A run samples random
// windows, takes AdamW steps under a warm-up and cosine schedule with
// gradient clipping, prints progress (loss, tokens per second, model
// FLOP utilisation), evaluates on fixed validation windows, writes
// checkpoints and the loss curve.
package gpttrain
