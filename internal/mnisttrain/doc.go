// Package mnisttrain trains the 784-512-512-10 perceptron on MNIST: the
// program behind examples/train-mnist and `gocu train`, and the training
// step that the benchmarks (go test -bench MLP here, gocu bench's training
// suite) time against ../shared/anchors/train_mlp.py. A Trainer runs a step
// eagerly (Step) or captures it once as a CUDA graph and replays it
// (Capture, StepGraph, Replay); Run adds the data, shuffling, a cosine
// learning-rate decay, the progress bar, evaluation, the loss curve and the
// checkpoint.
package mnisttrain
