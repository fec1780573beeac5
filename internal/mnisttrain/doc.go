// Package mnisttrain trains the 784-512-512-10 perceptron on MNIST: the
// program behind examples/train-mnist and `gocu train`, and the training
// step that the benchmarks (go test -bench MLP here, gocu bench's training
// suite) time against ../shared/anchors/train_mlp.py. A Trainer runs a step
// eagerly (Step) or captures it once as a CUDA graph and replays it
// (Capture, StepGraph, Replay); Parallel trains data-parallel, one Trainer
// per rank of a dist.Comm, each batch split across the ranks and the
// gradients averaged before every step; Run adds the data, shuffling, a
// cosine learning-rate decay, the progress bar, evaluation, the loss curve
// and the checkpoint, on one device, on several (Config.Devices) or as the
// ranks of a job of several processes (Config.Comm).
package mnisttrain
