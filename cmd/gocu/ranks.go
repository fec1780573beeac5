package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/dist"
)

// placeFlags are the flags that say where a training command runs: one
// device, several from this process (data-parallel), or one process per
// rank. gocu train and gocu gpt train share them.
type placeFlags struct {
	device, devices string
	ranks           int
}

func (p *placeFlags) add(f *pflag.FlagSet) {
	f.StringVar(&p.device, "device", "", "cpu, sim, cuda or cuda:N (default: GOCU_DIST_LOCAL_RANK's GPU in a job, else GOCU_DEVICE, else the GPU, else the CPU)")
	f.StringVar(&p.devices, "devices", "", "data-parallel in this process: the devices, comma-separated (cuda:0,cuda:1 or cpu,cpu)")
	f.IntVar(&p.ranks, "ranks", 0, "data-parallel in N processes started by this command, one rank each (rank r on cuda:r, or all on --device cpu or sim)")
}

// placement is where to train: in a rank of a job, comm; with --devices,
// devices; with --device, device; nil for the default device. launch says
// that --ranks asked for a job, which launch starts.
type placement struct {
	comm    *dist.Comm
	rank    int
	devices []*gocu.Device
	device  *gocu.Device
	launch  bool
}

// place resolves the flags. A process started as a rank of a job
// (GOCU_DIST_RANK set) joins it on --device, else on cuda:LOCAL_RANK, else
// on the CPU; close its comm when done.
func (p *placeFlags) place() (placement, error) {
	if p.ranks < 0 {
		return placement{}, fmt.Errorf("--ranks %d: want a number of processes >= 1", p.ranks)
	}
	job, isRank, err := dist.FromEnv()
	if err != nil {
		return placement{}, err
	}
	switch {
	case isRank:
		name := p.device
		if name == "" {
			name = "cpu"
			if gocu.GPUUsable() == nil {
				name = fmt.Sprintf("cuda:%d", job.LocalRank)
			}
		}
		d, err := gocu.Open(name)
		if err != nil {
			return placement{}, fmt.Errorf("rank %d: %w", job.Rank, err)
		}
		comm, err := job.Join(d)
		if err != nil {
			return placement{}, fmt.Errorf("rank %d: %w", job.Rank, err)
		}
		return placement{comm: comm, rank: job.Rank}, nil
	case p.ranks > 0:
		if p.devices != "" {
			return placement{}, errors.New("--ranks and --devices: give one (--ranks starts one process per rank, --devices drives several devices from one)")
		}
		return placement{launch: true}, nil
	case p.devices != "":
		if p.device != "" {
			return placement{}, errors.New("--device and --devices: give one")
		}
		var pl placement
		for _, name := range strings.Split(p.devices, ",") {
			d, err := gocu.Open(name)
			if err != nil {
				return placement{}, err
			}
			pl.devices = append(pl.devices, d)
		}
		return pl, nil
	case p.device != "":
		d, err := gocu.Open(p.device)
		if err != nil {
			return placement{}, err
		}
		return placement{device: d}, nil
	}
	return placement{}, nil
}

// first returns the device of the first local rank, or the one device
// (nil: the default).
func (pl placement) first() *gocu.Device {
	switch {
	case pl.comm != nil:
		return pl.comm.Devices()[0]
	case len(pl.devices) > 0:
		return pl.devices[0]
	}
	return pl.device
}

// all returns every device this process trains on (nil: the default).
func (pl placement) all() []*gocu.Device {
	switch {
	case pl.comm != nil:
		return pl.comm.Devices()
	case len(pl.devices) > 0:
		return pl.devices
	}
	return []*gocu.Device{pl.device}
}

// out is where a rank writes: rank 0 to w, the others nowhere.
func (pl placement) out(w io.Writer) io.Writer {
	if pl.comm != nil && pl.rank != 0 {
		return io.Discard
	}
	return w
}

// launch starts the job of --ranks: this program once per rank, running
// cmd (its path below gocu) with the flags given but --ranks and
// --devices, and the job's environment (dist.Launch, which also turns
// NVLink multicast off: NCCL_NVLS_ENABLE=0 unless set).
func (p *placeFlags) launch(cmd *cobra.Command) error {
	var kind gocu.Kind
	switch strings.ToLower(p.device) {
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
		return fmt.Errorf("--device %s with --ranks: rank r runs on cuda:r; --device takes cpu or sim (all ranks there)", p.device)
	}
	if kind == gocu.CUDA {
		n, err := cuda.DeviceCount()
		if err != nil {
			return err
		}
		if p.ranks > n {
			return fmt.Errorf("--ranks %d needs %d GPUs, this machine has %d (NCCL 2.5 to 2.29 refuse two ranks on one GPU); --device cpu runs the ranks on the CPU", p.ranks, p.ranks, n)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// The command's path below the root: train, or gpt train.
	args := strings.Fields(cmd.CommandPath())[1:]
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "ranks" && f.Name != "devices" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return dist.Launch(cmd.Context(), exe, args, p.ranks, kind, cmd.OutOrStdout())
}
