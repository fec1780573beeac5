package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/units"
)

// deviceInfo is one GPU as "gocu devices --json" prints it.
type deviceInfo struct {
	Index              int     `json:"index"`
	Name               string  `json:"name"`
	ComputeCapability  string  `json:"compute_capability"`
	Arch               string  `json:"arch"`
	Multiprocessors    int     `json:"multiprocessors"`
	TotalMemory        int64   `json:"total_memory_bytes"`
	FreeMemory         int64   `json:"free_memory_bytes"`
	MaxThreadsPerBlock int     `json:"max_threads_per_block"`
	SharedPerBlock     int     `json:"shared_memory_per_block_bytes"`
	SharedOptin        int     `json:"shared_memory_per_block_optin_bytes"`
	L2                 int     `json:"l2_cache_bytes"`
	ClockMHz           float64 `json:"clock_mhz,omitempty"`
	MemoryClockMHz     float64 `json:"memory_clock_mhz,omitempty"`
	BusWidth           int     `json:"memory_bus_width_bits,omitempty"`
	Bandwidth          float64 `json:"theoretical_bandwidth_gbps,omitempty"`
}

type devicesReport struct {
	Driver  int          `json:"driver_version,omitempty"`
	Library string       `json:"library,omitempty"`
	Devices []deviceInfo `json:"devices"`
	Reason  string       `json:"reason,omitempty"`
	// CPU lists the devices every machine has, cpu and sim.
	CPU []cpuDevice `json:"cpu_devices"`
	// Places lists where libcuda was looked for and why each failed,
	// with -v.
	Places string `json:"places_searched,omitempty"`
}

// cpuDevice is a device that runs on the CPU.
type cpuDevice struct {
	Name string `json:"name"`
	What string `json:"what"`
}

// cpuDevices explains cpu and sim, the one place the command does.
func cpuDevices() []cpuDevice {
	n := runtime.GOMAXPROCS(0)
	return []cpuDevice{
		{"cpu", fmt.Sprintf("the CPU (%d cores): arrays on all cores, Go kernels on the simulator; the default without a GPU", n)},
		{"sim", "the simulator as a device, for debugging: as cpu, and new memory is filled with 0xFF bytes so that reading what nothing wrote shows"},
	}
}

func newDevicesCmd() *cobra.Command {
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the CUDA devices and their properties",
		Long: `List the GPUs the CUDA driver sees, with compute capability, memory,
limits, and the theoretical memory bandwidth, then the devices every
machine has: cpu and sim (GOCU_DEVICE and --device take these names).
Without a GPU it says why in one line (-v lists the places searched for
the driver) and exits 0: gocu then runs on cpu.`,
		Example: "  gocu devices\n  gocu devices --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep := listDevices(verbose)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printDevices(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "without a GPU, list the places searched for the driver")
	return cmd
}

func listDevices(verbose bool) devicesReport {
	var rep devicesReport
	rep.Devices = []deviceInfo{}
	rep.CPU = cpuDevices()
	if err := cuda.Init(); err != nil {
		rep.Reason = units.OneLine(err)
		var le *cuda.LoadError
		if verbose && errors.As(err, &le) {
			rep.Places = le.Places()
		}
		return rep
	}
	rep.Driver, _ = cuda.DriverVersion()
	rep.Library, _ = cuda.LibraryPath() // Init succeeded: it has a path
	devs, err := cuda.Devices()
	if err != nil {
		rep.Reason = units.OneLine(err)
		return rep
	}
	if len(devs) == 0 {
		rep.Reason = "the CUDA driver is loaded but sees no GPU"
	}
	for _, d := range devs {
		p := d.Props()
		free, _, _ := d.MemInfo()
		rep.Devices = append(rep.Devices, deviceInfo{
			Index: d.Ordinal(), Name: p.Name, ComputeCapability: p.ComputeCapability(), Arch: p.Arch(),
			Multiprocessors: p.Multiprocessors, TotalMemory: p.TotalMemory, FreeMemory: free,
			MaxThreadsPerBlock: p.MaxThreadsPerBlock, SharedPerBlock: p.SharedMemPerBlock,
			SharedOptin: p.SharedMemPerBlockOptin, L2: p.L2CacheSize,
			ClockMHz: float64(p.ClockKHz) / 1e3, MemoryClockMHz: float64(p.MemoryClockKHz) / 1e3,
			BusWidth: p.MemoryBusWidth, Bandwidth: p.Bandwidth() / 1e9,
		})
	}
	return rep
}

func printDevices(w io.Writer, rep devicesReport) {
	defer func() {
		for _, d := range rep.CPU {
			fmt.Fprintf(w, "%s  %s\n", d.Name, d.What)
		}
	}()
	if len(rep.Devices) == 0 {
		fmt.Fprintf(w, "no CUDA GPU: %s; gocu runs on cpu\n", rep.Reason)
		if rep.Places != "" {
			fmt.Fprintf(w, "places searched for libcuda.so.1:\n%s\n", rep.Places)
		}
		return
	}
	fmt.Fprintf(w, "CUDA driver %d.%d (%s)\n", rep.Driver/1000, rep.Driver%1000/10, rep.Library)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tname\tcc\tSMs\tmemory (free/total)\tthreads/block\tshared/block (opt-in)\tL2\tbandwidth")
	for _, d := range rep.Devices {
		bw := "n/a"
		if d.Bandwidth > 0 {
			bw = fmt.Sprintf("%.0f GB/s", d.Bandwidth)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s / %s\t%d\t%s (%s)\t%s\t%s\n", d.Index, d.Name, d.ComputeCapability,
			d.Multiprocessors, units.Bytes(d.FreeMemory), units.Bytes(d.TotalMemory), d.MaxThreadsPerBlock,
			units.Bytes(int64(d.SharedPerBlock)), units.Bytes(int64(d.SharedOptin)), units.Bytes(int64(d.L2)), bw)
	}
	tw.Flush()
}
