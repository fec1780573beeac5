package main

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/datasets/gosrc"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/internal/gpttrain"
)

func newGPTCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gpt",
		Short: "Train a GPT from scratch on the Go source tree, and sample Go code from it",
		Long: `A GPT in GPT-2's shape (package gpt), byte-level, trained on the .go files
that every Go installation carries ($(go env GOROOT)/src, about 100 MB):

  gocu gpt prepare   packs the sources into one file (train/validation split
                     by file), which a machine without Go can train on
  gocu gpt train     trains, with progress, validation loss, checkpoints and a
                     loss curve
  gocu gpt sample    continues a prompt from a checkpoint`,
		Example: "  gocu gpt prepare\n  gocu gpt train --time 10m --bf16 --plot loss.png\n  gocu gpt sample --prompt 'func main() {'",
	}
	cmd.AddCommand(newGPTPrepareCmd(), newGPTTrainCmd(), newGPTSampleCmd())
	return cmd
}

func newGPTPrepareCmd() *cobra.Command {
	var src, out string
	var val float64
	cmd := &cobra.Command{
		Use:   "prepare",
		Short: "Pack the Go source tree into a corpus file for gocu gpt train",
		Long: `Pack every .go file under the Go source tree ($(go env GOROOT)/src, or
--src) into one file: the training and validation bytes, split by a hash of
each file's path, behind a 64-byte header (see package datasets/gosrc),
readable without Go. The same tree gives the same file everywhere. A name
ending in .gz writes it gzip-compressed (about 5x smaller), which gocu gpt
train reads as well.`,
		Example: "  gocu gpt prepare\n  gocu gpt prepare --out gosrc.tok.gz\n  gocu gpt prepare --src ~/go/src --out go.tok --val 0.1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !(val > 0 && val < 1) {
				return fmt.Errorf("--val %v: want a fraction of the files in (0, 1)", val)
			}
			if src == "" {
				s, err := gosrc.GoSrc()
				if err != nil {
					return fmt.Errorf("%w; or give --src", err)
				}
				src = s
			}
			start := time.Now()
			c, err := gosrc.Pack(src, &gosrc.Options{ValFraction: val})
			if err != nil {
				return err
			}
			if err := c.WriteFile(out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "packed %s in %.1fs: %.1f MB of training tokens (%d files), %.1f MB of validation tokens (%d files) -> %s\n",
				src, time.Since(start).Seconds(), float64(len(c.Train))/1e6, c.TrainFiles, float64(len(c.Val))/1e6, c.ValFiles, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&src, "src", "", "folder of Go sources (default: $(go env GOROOT)/src)")
	f.StringVar(&out, "out", "gosrc.tok", "the corpus file to write")
	f.Float64Var(&val, "val", 0.05, "share of the files for validation")
	return cmd
}

// presetDefaults are the training defaults of each preset, nanoGPT's:
// shakespeare_char's for the byte models, GPT-2's for gpt2.
var presetDefaults = map[string]struct {
	batch, warmup int
	lr, beta2     float64
}{
	"tiny":  {32, 50, 3e-3, 0.99},
	"bytes": {64, 100, 1e-3, 0.99},
	"gpt2":  {16, 200, 6e-4, 0.95},
}

func newGPTTrainCmd() *cobra.Command {
	var (
		cfg                         gpttrain.Config
		data, preset, initCk        string
		layers, heads, dim, context int
		vocab                       int
		tf32                        bool
		peak                        float64
		place                       placeFlags
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a GPT on the packed Go source",
		Long: `Train a GPT on the corpus of gocu gpt prepare: AdamW (weight decay on matrices
and embeddings only) with a linear warm-up and a cosine decay, gradient
clipping, random windows of the training split. Every --report steps it
prints the mean loss, tokens per second and the model FLOP utilisation
(6 FLOPs per parameter and token, plus attention's 6·layers·context·width,
against the GPU's dense peak; --peak sets it for other devices); every
--eval steps the loss on fixed validation windows, and writes the
checkpoint (--save), with the optimiser state beside it (.opt.safetensors).
--time fits the number of steps, and the schedule, to a duration; --stop
ends a run early and --resume continues it exactly, as if it had not
stopped.

Presets: bytes (6 layers, 6 heads, 384 wide, context 256: nanoGPT's
shakespeare_char shape), gpt2 (GPT-2 small, 124M, with its vocabulary of
50304, of which bytes use 256: --vocab 256 drops the rest) and tiny (2
layers, 64 wide, context 64); --layers, --heads, --dim, --context and
--vocab change a preset's shape.

Data-parallel training splits every batch of --batch windows across ranks,
one model replica per rank; the gradients are averaged in buckets while the
backward pass runs, as PyTorch's DistributedDataParallel, and clipped by
their global norm (NCCL on GPUs; on the CPU a host stand-in, for trying it
without GPUs). Rank 0 evaluates, writes the checkpoint and samples:

  --devices cuda:0,cuda:1   one process drives the GPUs listed (cpu,cpu: two
                            ranks on the CPU)
  --ranks N                 N processes, one rank each: this command starts
                            itself N times, rank r on cuda:r (or all on the
                            CPU with --device cpu), with NVLink multicast off
                            (NCCL_NVLS_ENABLE=0 unless set), and shows rank
                            0's output
  --zero                    shard the optimiser state across the ranks
                            (ZeRO-1); its checkpoints hold no optimiser state
                            (no --resume or --stop)

A process that drives several GPUs itself (--devices) reads
NCCL_NVLS_ENABLE from the environment it was started with: set it to 0
where NCCL's NVLink multicast fails (the lent H200 machines). A rank of a
job started by other means is this command with GOCU_DIST_RANK,
GOCU_DIST_NRANKS, GOCU_DIST_LOCAL_RANK and GOCU_DIST_ADDR set; see package
dist.`,
		Example: "  gocu gpt train --steps 2000 --plot loss.png\n  gocu gpt train --time 10m --bf16 --save bytes.safetensors\n" +
			"  gocu gpt train --time 10m --bf16 --stop 5m && gocu gpt train --resume gpt.safetensors\n" +
			"  gocu gpt train --model tiny --device cpu --steps 300\n  gocu gpt train --model gpt2 --bf16 --time 5m\n" +
			"  gocu gpt train --model gpt2 --bf16 --devices cuda:0,cuda:1 --batch 32\n  gocu gpt train --model gpt2 --bf16 --ranks 4 --batch 64\n" +
			"  gocu gpt train --model tiny --devices cpu,cpu --steps 300",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mc, err := gpt.Preset(preset)
			if err != nil {
				return fmt.Errorf("--model: %w", err)
			}
			fl := cmd.Flags()
			for _, o := range []struct {
				name string
				v    int
				p    *int
			}{{"layers", layers, &mc.Layers}, {"heads", heads, &mc.Heads}, {"dim", dim, &mc.Dim}, {"context", context, &mc.Context}, {"vocab", vocab, &mc.Vocab}} {
				if fl.Changed(o.name) {
					*o.p = o.v
				}
			}
			if fl.Changed("dropout") {
				mc.Dropout = cfg.Model.Dropout
			}
			if err := mc.Validate(); err != nil {
				return err
			}
			cfg.Model = mc
			d := presetDefaults[preset]
			if !fl.Changed("batch") {
				cfg.Batch = d.batch
			}
			if !fl.Changed("lr") {
				cfg.LR = d.lr
			}
			if !fl.Changed("min-lr") {
				cfg.MinLR = cfg.LR / 10
			}
			if !fl.Changed("warmup") {
				cfg.Warmup = d.warmup
			}
			if !fl.Changed("beta2") {
				cfg.Beta2 = d.beta2
			}
			if (fl.Changed("time") || cfg.Resume != "") && !fl.Changed("steps") {
				cfg.Steps = 0
			}
			if cfg.Resume != "" && !fl.Changed("save") {
				cfg.Save = cfg.Resume // the run goes on in its checkpoint
			}
			if cfg.Resume != "" && initCk != "" {
				return fmt.Errorf("--resume and --init: give one (--resume continues a run, --init starts one from a model's weights)")
			}
			if !(peak >= 0) || math.IsInf(peak, 0) {
				return fmt.Errorf("--peak %v: want TFLOP/s >= 0", peak)
			}
			cfg.Peak = peak * 1e12
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
			if tf32 {
				for _, d := range pl.all() {
					dev := array.Default()
					if d != nil {
						dev = array.On(d)
					}
					dev.SetMatMulPrecision(array.TF32)
				}
			}
			c, err := gosrc.ReadFile(data)
			if err != nil {
				if os.IsNotExist(err) {
					return fmt.Errorf("%w (make it with gocu gpt prepare)", err)
				}
				return err
			}
			cfg.Corpus = c
			if initCk != "" {
				dev := pl.first()
				if dev == nil {
					dev = array.Default().Device()
				}
				m, _, err := gpt.Load(initCk, dev)
				if err != nil {
					return fmt.Errorf("--init: %w", err)
				}
				cfg.Model = m.Config
				cfg.Init = m
			}
			cfg.Out = pl.out(cmd.OutOrStdout())
			_, err = gpttrain.Run(cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "gosrc.tok", "the corpus of gocu gpt prepare (gzip-compressed or not)")
	f.StringVar(&preset, "model", "bytes", "preset: bytes, gpt2 or tiny")
	f.IntVar(&layers, "layers", 0, "transformer blocks (default: the preset's)")
	f.IntVar(&heads, "heads", 0, "attention heads (default: the preset's)")
	f.IntVar(&dim, "dim", 0, "width (default: the preset's)")
	f.IntVar(&context, "context", 0, "context in bytes (default: the preset's)")
	f.IntVar(&vocab, "vocab", 0, "vocabulary, >= 256 (default: the preset's)")
	f.Float64Var(&cfg.Model.Dropout, "dropout", 0, "dropout probability")
	f.IntVar(&cfg.Batch, "batch", 0, "windows per step, in all (data-parallel ranks split it; default: the preset's; bytes 64, gpt2 16, tiny 32)")
	f.IntVar(&cfg.Steps, "steps", 2000, "steps to train")
	f.DurationVar(&cfg.Time, "time", 0, "train for this long instead of --steps (10m, 1h)")
	f.Float64Var(&cfg.LR, "lr", 0, "peak learning rate (default: the preset's; bytes 1e-3, gpt2 6e-4, tiny 3e-3)")
	f.Float64Var(&cfg.MinLR, "min-lr", 0, "learning rate at the end of the decay (default: lr/10)")
	f.IntVar(&cfg.Warmup, "warmup", 0, "steps of linear warm-up (default: the preset's; bytes 100, gpt2 200, tiny 50)")
	f.Float64Var(&cfg.Decay, "wd", 0.1, "AdamW weight decay of matrices and embeddings")
	f.Float64Var(&cfg.Beta2, "beta2", 0, "AdamW's beta2 (default: the preset's; 0.99, gpt2 0.95)")
	f.Float64Var(&cfg.Clip, "clip", 1, "clip the gradients' total norm to this (0: off)")
	f.BoolVar(&cfg.BF16, "bf16", false, "mixed precision: products in bfloat16 on the tensor cores, float32 master weights")
	f.BoolVar(&tf32, "tf32", false, "float32 products on the TF32 tensor cores")
	f.BoolVar(&cfg.Graph, "graph", false, "capture one training step as a CUDA graph and replay it (GPU; dropout masks repeat)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the initial weights and of the batches")
	f.IntVar(&cfg.Report, "report", 10, "steps between progress lines")
	f.IntVar(&cfg.Eval, "eval", 250, "steps between validation losses and checkpoints (0: at the end)")
	f.IntVar(&cfg.EvalN, "eval-batches", 10, "validation batches per evaluation")
	f.StringVar(&cfg.Save, "save", "gpt.safetensors", "checkpoint file (empty: none; with --resume, the resumed one)")
	f.StringVar(&cfg.Plot, "plot", "", "write the loss curve to this PNG `FILE`")
	f.Float64Var(&peak, "peak", 0, "the device's peak in TFLOP/s for the utilisation (default: H100, H200 and A100 datasheet figures)")
	f.IntVar(&cfg.Sample, "sample", 300, "bytes to sample from the trained model at the end (0: none)")
	place.add(f)
	f.BoolVar(&cfg.ZeRO, "zero", false, "with --devices or --ranks: shard the optimiser state across the ranks (ZeRO-1)")
	f.StringVar(&initCk, "init", "", "start a new run from this checkpoint's weights (its shape replaces --model)")
	f.StringVar(&cfg.Resume, "resume", "", "continue the run of this checkpoint where it stopped: weights, optimiser state, batches, settings (--steps moves the end)")
	f.DurationVar(&cfg.Stop, "stop", 0, "end after this long with a checkpoint that --resume continues (a run longer than one sitting)")
	return cmd
}

func newGPTSampleCmd() *cobra.Command {
	var (
		ckpt, prompt, device string
		opts                 gpt.GenerateOptions
		bf16                 bool
	)
	cmd := &cobra.Command{
		Use:   "sample",
		Short: "Continue a prompt with a GPT checkpoint",
		Long: `Continue --prompt with the model of a checkpoint of gocu gpt train, byte by
byte, with a cache of keys and values: temperature and top-k shape the
choice, --seed fixes it. The output is printed as it comes, as valid UTF-8:
a byte that starts no character, and a control character other than tab
and newline, is printed as U+FFFD.`,
		Example: "  gocu gpt sample --prompt 'func main() {'\n  gocu gpt sample --ckpt bytes.safetensors --tokens 1000 --temperature 0.7 --top-k 20 --seed 3",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var dev *gocu.Device
			if device != "" {
				d, err := gocu.Open(device)
				if err != nil {
					return err
				}
				dev = d
			} else {
				dev = array.Default().Device()
			}
			m, _, err := gpt.Load(ckpt, dev)
			if err != nil {
				return err
			}
			if m.Config.Vocab < gosrc.Vocab {
				return fmt.Errorf("%s: a model of %d tokens; gocu gpt sample speaks bytes (256)", ckpt, m.Config.Vocab)
			}
			if bf16 {
				m.Compute = array.BFloat16
			}
			out := cmd.OutOrStdout()
			w := gpt.NewTextWriter(out)
			for _, t := range gpttrain.Tokens(prompt) {
				if err := w.WriteToken(t); err != nil {
					return err
				}
			}
			opts.Emit = w.WriteToken
			if _, err := m.Generate(gpttrain.Tokens(prompt), opts); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&ckpt, "ckpt", "gpt.safetensors", "checkpoint of gocu gpt train")
	f.StringVar(&prompt, "prompt", "package main\n\n", "the text to continue")
	f.IntVar(&opts.Tokens, "tokens", 500, "bytes to generate")
	f.Float64Var(&opts.Temperature, "temperature", 0.8, "softmax temperature (0: the most likely byte)")
	f.IntVar(&opts.TopK, "top-k", 40, "draw among the k most likely bytes (0: all)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the draws")
	f.BoolVar(&opts.NoCache, "no-cache", false, "recompute the whole window for every byte (slower, same output)")
	f.BoolVar(&bf16, "bf16", false, "products in bfloat16")
	f.StringVar(&device, "device", "", "cpu, sim, cuda or cuda:N (default: GOCU_DEVICE, else the GPU, else the CPU)")
	return cmd
}
