package mnisttrain

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/internal/cli"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/datasets/mnist"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// Config says what to train and how.
type Config struct {
	Device   *gocu.Device // nil: array.Default()'s device (the GPU, else the CPU)
	DataDir  string       // the four MNIST files; "" finds GoMNIST's (mnist.Dir)
	Epochs   int          // passes over the 60,000 images (default 5)
	Batch    int          // images per step (default 64)
	LR       float64      // Adam's learning rate (default 1e-3)
	Hidden   int          // units of the two hidden layers (default 512)
	Seed     uint64       // initial weights and shuffling
	Graph    bool         // capture one step as a CUDA graph and replay it (GPU)
	BF16     bool         // mixed precision: products in bfloat16, float32 master weights
	Constant bool         // keep the learning rate (default: cosine decay to 0 over the run)
	MaxSteps int          // stop after this many steps (0: all epochs)
	Plot     string       // write the loss curve to this PNG file
	Save     string       // write the trained weights to this safetensors file
	Out      io.Writer    // progress and results (nil: discarded)

	// Devices trains data-parallel in this process, one model replica per
	// device: each batch of Batch images is split across them
	// (dist.Split), and the gradients are averaged with dist before every
	// step (NCCL on GPUs; the host backend on cpu and sim, where a device
	// may repeat). It replaces Device.
	Devices []*gocu.Device
	// Comm trains as this process's ranks of a data-parallel job of
	// several processes (from dist.Join); it replaces Device and Devices.
	// Every process runs Run with the same Config (seed, batch, epochs,
	// data) and its own Comm; the process of global rank 0 writes Plot and
	// Save.
	Comm *dist.Comm
}

// check refuses what no default stands for: negative sizes and a learning
// rate that is not a finite positive number (zero means the default), and
// a plot file of a format it cannot write, before any training.
func (cfg *Config) check() error {
	for _, c := range []struct {
		name string
		v    int
	}{{"epochs", cfg.Epochs}, {"batch", cfg.Batch}, {"hidden units", cfg.Hidden}, {"maximum steps", cfg.MaxSteps}} {
		if c.v < 0 {
			return fmt.Errorf("mnisttrain: %s %d: want a positive number (0: the default)", c.name, c.v)
		}
	}
	if !(cfg.LR >= 0) || math.IsInf(cfg.LR, 0) {
		return fmt.Errorf("mnisttrain: learning rate %v: want a finite number > 0 (0: the default)", cfg.LR)
	}
	if cfg.Plot != "" {
		if err := CheckPlotPath(cfg.Plot); err != nil {
			return err
		}
	}
	return nil
}

// Point is the mean training loss over the steps up to Step.
type Point struct {
	Step int
	Loss float64
}

// Result is what a run measured.
type Result struct {
	Device, Model string
	Ranks         int // ranks the batches were split across (1: not data-parallel)
	Steps, Images int
	Losses        []Point
	EpochAccuracy []float64       // test accuracy after each epoch
	EpochTimes    []time.Duration // training time of each epoch
	Accuracy      float64         // final test accuracy
}

// The pixels are normalised with MNIST's training mean and deviation.
const (
	pixelMean = 0.1307
	pixelStd  = 0.3081
	classes   = 10
	report    = 50 // steps between loss readings
)

// NewMLP returns 784-hidden-hidden-10 with ReLU, initialised from rng.
func NewMLP(rng *array.RNG, hidden int) *nn.Sequential {
	return nn.NewSequential(
		nn.NewLinear(rng, mnist.Rows*mnist.Cols, hidden), nn.ReLU{},
		nn.NewLinear(rng, hidden, hidden), nn.ReLU{},
		nn.NewLinear(rng, hidden, classes))
}

// Normalize turns uint8 images (N, 784) into the network's float32 input,
// lazily: it fuses into the first layer's read.
func Normalize(pix *array.Array) *array.Array {
	return pix.AsType(array.Float32).Mul(1 / (255 * pixelStd)).Sub(pixelMean / pixelStd)
}

// Trainer holds a model, its optimiser and the training state.
type Trainer struct {
	Model *nn.Sequential
	Opt   *nn.Adam
	// Track adds each step's loss to a running sum on the device
	// (LossSum): one more small kernel per step.
	Track bool
	dev   *array.Maker
	acc   *array.Array // running sum of the losses, on the device
	graph *array.Graph
	xs    *array.Array // the captured step's static input (graph mode)
	ys    *array.Array
}

// NewTrainer builds the model and Adam on dev.
func NewTrainer(dev *array.Maker, seed uint64, hidden int, lr float64) *Trainer {
	m := NewMLP(dev.NewRNG(seed), hidden)
	return &Trainer{Model: m, Opt: nn.NewAdam(nn.Params(m), lr), dev: dev, acc: dev.Zeros(array.Float64).Copy(), Track: true}
}

// SetCompute makes every Linear layer compute its products in dt (e.g.
// array.BFloat16: mixed precision, forward and backward products on the
// bfloat16 tensor cores, the weights and the optimiser in float32); 0
// returns to the weights' own precision.
func (t *Trainer) SetCompute(dt array.DType) {
	for _, l := range t.Model.Layers {
		if lin, ok := l.(*nn.Linear); ok {
			lin.Compute = dt
		}
	}
}

// Step trains on one batch: x float32 (B, 784), y int64 (B), as
// torch's opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step().
// With Track the loss is added to the running sum on the device; nothing
// waits for the device.
func (t *Trainer) Step(x, y *array.Array) error {
	loss, err := t.backward(x, y, 1)
	if err != nil {
		return err
	}
	return t.update(loss, 1)
}

// backward clears the gradients and runs the forward and backward passes
// of one batch, the loss multiplied by gradScale (1: as it is), and
// returns the loss.
func (t *Trainer) backward(x, y *array.Array, gradScale float64) (*grad.Var, error) {
	t.Opt.ZeroGrad()
	loss := nn.CrossEntropy(t.Model.Forward(grad.Const(x)), y)
	obj := loss
	if gradScale != 1 {
		obj = loss.Mul(gradScale)
	}
	return loss, obj.Backward()
}

// update takes the optimiser step and, with Track, adds the loss times
// lossScale to the running sum (a nil loss adds nothing).
func (t *Trainer) update(loss *grad.Var, lossScale float64) error {
	if err := t.Opt.Step(); err != nil {
		return err
	}
	if !t.Track || loss == nil {
		return nil
	}
	v := loss.Value()
	if lossScale != 1 {
		v = v.Mul(lossScale)
	}
	return t.acc.Assign(t.acc.Add(v))
}

// LossSum reads the running sum of the losses (it waits for the device).
func (t *Trainer) LossSum() (float64, error) { return t.acc.Item() }

// Capture trains on batch (x, y) and records that step, on static copies
// of its inputs, as a CUDA graph (array.Maker.Capture runs the step once
// for real, which also compiles what it needs, then records it); StepGraph
// then replays it with the next batches. On the CPU the "graph" runs the
// step.
func (t *Trainer) Capture(x, y *array.Array) error {
	t.xs, t.ys = x.Copy(), y.Copy()
	g, err := t.dev.Capture(func() error { return t.Step(t.xs, t.ys) })
	if err != nil {
		return err
	}
	t.graph = g
	return nil
}

// Replay replays the captured step on the static inputs as they are.
func (t *Trainer) Replay() error { return t.graph.Replay() }

// StepGraph copies a batch into the static inputs and replays the step.
func (t *Trainer) StepGraph(x, y *array.Array) error {
	if err := t.xs.Assign(x); err != nil {
		return err
	}
	if err := t.ys.Assign(y); err != nil {
		return err
	}
	return t.graph.Replay()
}

// Close releases the captured graph.
func (t *Trainer) Close() error {
	if t.graph != nil {
		return t.graph.Close()
	}
	return nil
}

// Accuracy evaluates the model on images x (uint8 or float32, (N, 784)) and
// labels y (N), in batches, without recording.
func (t *Trainer) Accuracy(x, y *array.Array) (float64, error) {
	const batch = 1000
	n := x.Shape()[0]
	correct := t.dev.Zeros(array.Int64).Copy()
	var err error
	grad.NoGrad(func() {
		for i := 0; i < n && err == nil; i += batch {
			xb := x.Slice(array.S(i, min(i+batch, n)))
			if xb.DType() == array.Uint8 {
				xb = Normalize(xb)
			}
			yb := y.Slice(array.S(i, min(i+batch, n)))
			pred := t.Model.Forward(grad.Const(xb)).Value().ArgMax(1)
			err = correct.Assign(correct.Add(pred.Eq(yb).Sum()))
		}
	})
	if err != nil {
		return 0, err
	}
	c, err := correct.Item()
	return c / float64(max(n, 1)), err
}

// Run trains and evaluates as cfg says, printing progress to cfg.Out.
func Run(cfg Config) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Epochs <= 0 {
		cfg.Epochs = 5
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.LR <= 0 {
		cfg.LR = 1e-3
	}
	if cfg.Hidden <= 0 {
		cfg.Hidden = 512
	}
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	comm := cfg.Comm
	if comm == nil && len(cfg.Devices) > 0 {
		c, err := dist.New(cfg.Devices...)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		comm = c
	}
	dev := array.Default()
	if comm != nil {
		dev = array.On(comm.Devices()[0])
	} else if cfg.Device != nil {
		dev = array.On(cfg.Device)
	}
	if err := dev.Err(); err != nil {
		return nil, err
	}
	train, test, err := mnist.Load(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	switch {
	case train.N == 0 || test.N == 0:
		return nil, fmt.Errorf("mnisttrain: the data has %d training and %d test images: nothing to train or test on", train.N, test.N)
	case cfg.Batch > train.N:
		return nil, fmt.Errorf("mnisttrain: batch of %d images: the training set has %d", cfg.Batch, train.N)
	}
	res := &Result{Device: dev.String(), Model: fmt.Sprintf("%d-%d-%d-%d", mnist.Rows*mnist.Cols, cfg.Hidden, cfg.Hidden, classes), Ranks: 1}
	graph := cfg.Graph
	switch {
	case graph && comm != nil:
		fmt.Fprintf(out, "data-parallel training runs each step directly: --graph is not used\n")
		graph = false
	case graph && !dev.IsGPU():
		fmt.Fprintf(out, "no GPU: --graph runs the step directly on %v\n", dev)
	}
	sched := "cosine decay"
	if cfg.Constant {
		sched = "constant"
	}
	where := dev.String()
	if comm != nil {
		res.Ranks = comm.Size()
		res.Device = fmt.Sprintf("%d ranks (%s)", comm.Size(), deviceList(comm))
		where = fmt.Sprintf("%d ranks, data-parallel (%s; this process: %s), %d images per rank and step", comm.Size(), comm.Backend(), rankList(comm), cfg.Batch/comm.Size())
	}
	epochs := fmt.Sprintf("%d epochs", cfg.Epochs)
	if cfg.Epochs == 1 {
		epochs = "1 epoch"
	}
	fmt.Fprintf(out, "training %s on %s: %d images, batch %d, Adam lr %g (%s), %s%s\n",
		res.Model, where, train.N, cfg.Batch, cfg.LR, sched, epochs, map[bool]string{true: ", CUDA graph", false: ""}[graph])

	// One replica (t) without a communicator; one per local rank with.
	var (
		t        *Trainer
		par      *Parallel
		devs     = []*gocu.Device{dev.Device()}
		setLR    func(float64) error
		lossSum  func() (float64, error)
		syncDevs func() error
	)
	if comm == nil {
		t = NewTrainer(dev, cfg.Seed, cfg.Hidden, cfg.LR)
		defer t.Close()
		setLR, lossSum, syncDevs = t.Opt.SetLR, t.LossSum, dev.Sync
	} else {
		if par, err = NewParallel(comm, cfg.Seed, cfg.Hidden, cfg.LR); err != nil {
			return nil, err
		}
		t = par.Replicas[0]
		devs = comm.Devices()
		setLR, lossSum, syncDevs = par.SetLR, par.LossSum, par.Sync
	}
	if cfg.BF16 {
		if par != nil {
			for _, r := range par.Replicas {
				r.SetCompute(array.BFloat16)
			}
		} else {
			t.SetCompute(array.BFloat16)
		}
	}
	testX := array.FromSliceOn(dev.Device(), test.Images, test.N, mnist.Rows*mnist.Cols)
	testY := array.FromSliceOn(dev.Device(), test.Labels, test.N).AsType(array.Int64).Eval()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6d6e697374))
	bar := newBar(out)
	lastSum, lastStep := 0.0, 0
	read := func() error {
		s, err := lossSum()
		if err != nil {
			return err
		}
		if res.Steps > lastStep {
			res.Losses = append(res.Losses, Point{res.Steps, (s - lastSum) / float64(res.Steps-lastStep)})
		}
		lastSum, lastStep = s, res.Steps
		return nil
	}
	total := cfg.Epochs * ((train.N + cfg.Batch - 1) / cfg.Batch)
	if cfg.MaxSteps > 0 {
		total = min(total, cfg.MaxSteps)
	}
	imgs := make([]uint8, len(train.Images))
	labels := make([]int64, train.N)
	const px = mnist.Rows * mnist.Cols
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		// Shuffle on the host (every rank the same way: the seed), then
		// one upload per epoch and device: batches are contiguous views.
		for i, j := range rng.Perm(train.N) {
			copy(imgs[i*px:(i+1)*px], train.Image(j))
			labels[i] = int64(train.Labels[j])
		}
		Xs := map[*gocu.Device]*array.Array{}
		Ys := map[*gocu.Device]*array.Array{}
		for _, d := range devs {
			if Xs[d] == nil {
				Xs[d] = array.FromSliceOn(d, imgs, train.N, px)
				Ys[d] = array.FromSliceOn(d, labels, train.N)
			}
		}
		X, Y := Xs[devs[0]], Ys[devs[0]]
		start := time.Now()
		seen := 0
		for i := 0; i < train.N; i += cfg.Batch {
			j := min(i+cfg.Batch, train.N)
			if !cfg.Constant {
				// Cosine annealing (torch's CosineAnnealingLR), per step.
				if err := setLR(cfg.LR * 0.5 * (1 + math.Cos(math.Pi*float64(res.Steps)/float64(total)))); err != nil {
					return nil, err
				}
			}
			switch {
			case par != nil:
				xs := make([]*array.Array, len(devs))
				ys := make([]*array.Array, len(devs))
				for k, d := range devs {
					lo, hi := dist.Split(j-i, comm.Size(), comm.Rank(k))
					xs[k], ys[k] = Normalize(Xs[d].Slice(array.S(i+lo, i+hi))), Ys[d].Slice(array.S(i+lo, i+hi))
				}
				err = par.Step(xs, ys, j-i)
			case graph && t.graph == nil && j-i == cfg.Batch:
				err = t.Capture(Normalize(X.Slice(array.S(i, j))), Y.Slice(array.S(i, j)))
			case graph && t.graph != nil && j-i == cfg.Batch:
				err = t.StepGraph(Normalize(X.Slice(array.S(i, j))), Y.Slice(array.S(i, j)))
			default:
				err = t.Step(Normalize(X.Slice(array.S(i, j))), Y.Slice(array.S(i, j)))
			}
			if err != nil {
				return nil, fmt.Errorf("epoch %d, step %d: %w", epoch, res.Steps+1, err)
			}
			res.Steps++
			seen += j - i
			res.Images += j - i
			if res.Steps%report == 0 || j == train.N {
				if err := read(); err != nil {
					return nil, err
				}
				el := time.Since(start)
				bar.show(epoch, cfg.Epochs, float64(j)/float64(train.N), res.Losses[len(res.Losses)-1].Loss, float64(seen)/el.Seconds())
			}
			if cfg.MaxSteps > 0 && res.Steps >= cfg.MaxSteps {
				break
			}
		}
		if err := syncDevs(); err != nil {
			return nil, err
		}
		res.EpochTimes = append(res.EpochTimes, time.Since(start))
		acc, err := t.Accuracy(testX, testY)
		if err != nil {
			return nil, err
		}
		res.EpochAccuracy = append(res.EpochAccuracy, acc)
		bar.done(fmt.Sprintf("%.2fs, %.0f images/s, test accuracy %.2f%%", res.EpochTimes[epoch-1].Seconds(), float64(seen)/res.EpochTimes[epoch-1].Seconds(), 100*acc))
		for d := range Xs {
			Xs[d].Close()
			Ys[d].Close()
		}
		if cfg.MaxSteps > 0 && res.Steps >= cfg.MaxSteps {
			break
		}
	}
	res.Accuracy = res.EpochAccuracy[len(res.EpochAccuracy)-1]
	fmt.Fprintf(out, "test accuracy %.2f%% after %d steps (%d images)\n", 100*res.Accuracy, res.Steps, res.Images)
	if comm != nil && comm.Rank(0) != 0 {
		return res, nil // global rank 0 writes the files
	}
	if cfg.Plot != "" {
		if err := PlotLoss(cfg.Plot, res); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "loss curve: %s\n", cfg.Plot)
	}
	if cfg.Save != "" {
		meta := map[string]string{"model": "mlp-" + res.Model, "accuracy": fmt.Sprintf("%.4f", res.Accuracy)}
		if err := nn.SaveFile(cfg.Save, t.Model, meta); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "weights: %s\n", cfg.Save)
	}
	return res, nil
}

// deviceList names the devices of the local ranks: "cuda:0, cuda:1".
func deviceList(c *dist.Comm) string {
	s := ""
	for i, d := range c.Devices() {
		if i > 0 {
			s += ", "
		}
		s += d.ID()
	}
	return s
}

// rankList says which ranks this process drives: "ranks 0-1 on cuda:0,
// cuda:1" or "rank 1 on cuda:1".
func rankList(c *dist.Comm) string {
	n := len(c.Devices())
	if n == 1 {
		return fmt.Sprintf("rank %d on %s", c.Rank(0), deviceList(c))
	}
	return fmt.Sprintf("ranks %d-%d on %s", c.Rank(0), c.Rank(n-1), deviceList(c))
}

// bar is a one-line progress bar, redrawn in place on a terminal and
// printed once per epoch elsewhere.
type bar struct {
	w    io.Writer
	tty  bool
	line string
}

func newBar(w io.Writer) *bar { return &bar{w: w, tty: cli.IsTerminal(w)} }

func (b *bar) show(epoch, epochs int, frac, loss, rate float64) {
	const width = 30
	n := int(frac * width)
	b.line = fmt.Sprintf("epoch %d/%d [%s%s] %3.0f%% loss %.4f %7.0f images/s", epoch, epochs,
		strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac, loss, rate)
	if b.tty {
		fmt.Fprintf(b.w, "\r%s", b.line)
	}
}

func (b *bar) done(tail string) {
	if b.tty {
		fmt.Fprintf(b.w, "\r%s  %s\n", b.line, tail)
		return
	}
	fmt.Fprintf(b.w, "%s  %s\n", b.line, tail)
}
