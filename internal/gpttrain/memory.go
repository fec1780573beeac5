package gpttrain

import (
	"fmt"

	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/internal/units"
)

// LiveSet is what a GPT training step must hold at its peak, the start of
// the backward pass, in bytes: the floor that PyTorch's eager step reaches
// up to its classifier (../shared/anchors/train_gpt.py). A step that holds
// much more keeps memory it no longer needs.
type LiveSet struct {
	// State is the float32 parameters, gradients and AdamW's two
	// moments: 16 bytes a parameter.
	State int64
	// Weights is the copies of the weight matrices in the compute
	// precision (2 bytes a parameter with bfloat16, else none).
	Weights int64
	// Activations is what the blocks keep for the backward pass, per
	// token: the float32 residual stream before and after attention (8·D
	// bytes), and in the compute precision the two layer norms' outputs,
	// the queries, keys and values, attention's output and its copy with
	// the heads side by side, the MLP's product and GELU (15·D elements);
	// the final layer norm's output (D elements).
	Activations int64
	// Attention is what attention keeps beyond its output: each row's
	// logsumexp (float32) for a fused kernel, else the probabilities in
	// float32 and in the compute precision (B·H·T² each).
	Attention int64
	// Classifier is, with the fused classifier, the logits in the compute
	// precision and their gradient, written in the forward pass; else the
	// float32 log-probabilities, their gradient and the logits'.
	Classifier int64
}

// Total is the sum of the parts.
func (l LiveSet) Total() int64 {
	return l.State + l.Weights + l.Activations + l.Attention + l.Classifier
}

func (l LiveSet) String() string {
	return fmt.Sprintf("%s (state %s, half weights %s, activations %s, attention %s, classifier %s)",
		units.Bytes(l.Total()), units.Bytes(l.State), units.Bytes(l.Weights), units.Bytes(l.Activations),
		units.Bytes(l.Attention), units.Bytes(l.Classifier))
}

// Live returns the live set of a training step of the model at batch b:
// products in bfloat16 (half) or float32, with fused attention and
// classifier kernels (fused, as on a GPU) or composed operations.
func Live(cfg gpt.Config, b int, half, fused bool) LiveSet {
	e := int64(4)
	if half {
		e = 2
	}
	p := int64(cfg.Params())
	n, d, t := int64(b)*int64(cfg.Context), int64(cfg.Dim), int64(cfg.Context)
	l, h, v := int64(cfg.Layers), int64(cfg.Heads), int64(cfg.Vocab)
	var s LiveSet
	s.State = 16 * p
	if half {
		s.Weights = 2 * (v*d + l*12*d*d) // the matrices: tied embedding, 12·D² a block
	}
	s.Activations = l*(8+15*e)*n*d + e*n*d
	if fused {
		s.Attention = l * 4 * int64(b) * h * t
		s.Classifier = 2 * e * n * v
	} else {
		s.Attention = l * (4 + e) * int64(b) * h * t * t
		s.Classifier = 3 * 4 * n * v
	}
	return s
}
