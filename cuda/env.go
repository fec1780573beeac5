package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Environment variables read by the package (once, when first needed):
//
//	GOCU_CUDA_LIB         path of libcuda.so.1; replaces the search of the usual places
//	GOCU_LAUNCH_BLOCKING  1: synchronise after every launch and attribute errors to it
//	GOCU_LOG              comma-separated: "launch" logs every launch, "alloc" the allocator's driver traffic (log/slog)
//	GOCU_ALLOCATOR        "plain": no caching allocator, every Alloc and Free goes to the driver
//	GOCU_MEMORY_LIMIT     cap on the memory each device's allocator holds: bytes, or 512MiB, 4GiB, 2GB, ...
const (
	envLib      = "GOCU_CUDA_LIB"
	envBlocking = "GOCU_LAUNCH_BLOCKING"
	envLog      = "GOCU_LOG"
	envAlloc    = "GOCU_ALLOCATOR"
	envLimit    = "GOCU_MEMORY_LIMIT"
)

var (
	launchBlocking atomic.Bool
	logLaunches    atomic.Bool
)

func init() {
	launchBlocking.Store(envBool(envBlocking))
	logLaunches.Store(envLogs("launch"))
}

// SetLaunchBlocking turns launch-blocking mode on or off for the whole
// process, like GOCU_LAUNCH_BLOCKING=1: every launch is followed by a
// synchronisation of its stream, so that a fault in the kernel is reported
// by the launch, naming the kernel, its configuration and the Go call site.
// It costs the overlap of CPU and GPU; use it to debug.
func SetLaunchBlocking(on bool) { launchBlocking.Store(on) }

// LaunchBlocking reports whether launch-blocking mode is on.
func LaunchBlocking() bool { return launchBlocking.Load() }

// SetLogLaunches turns the logging of every launch through log/slog on or
// off, like GOCU_LOG=launch.
func SetLogLaunches(on bool) { logLaunches.Store(on) }

func envBool(name string) bool {
	v := strings.TrimSpace(os.Getenv(name))
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// envLogs reports whether GOCU_LOG names topic.
func envLogs(topic string) bool {
	for _, t := range strings.Split(os.Getenv(envLog), ",") {
		if t = strings.TrimSpace(t); t == topic || t == "all" {
			return true
		}
	}
	return false
}

// parseBytes reads a size such as "1073741824", "512MiB", "4GiB" or "2GB".
func parseBytes(orig string) (int64, error) {
	s := strings.TrimSpace(orig)
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if len(s) > len(u.suffix) && strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
			mult = u.mult
			s = strings.TrimSpace(s[:len(s)-len(u.suffix)])
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("cuda: cannot read %q as a size in bytes (examples: 1073741824, 512MiB, 4GiB, 2GB)", orig)
	}
	return int64(f * float64(mult)), nil
}
