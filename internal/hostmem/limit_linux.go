package hostmem

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// readMemoryLimit returns the physical memory (sysinfo), lowered to the
// memory.max of the process's cgroup (v2) when that is set and lower.
func readMemoryLimit() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	unit := int64(max(si.Unit, 1))
	mem := max(int64(si.Totalram)*unit, 0)
	if v := cgroupMemoryMax(); v > 0 && (mem == 0 || v < mem) {
		mem = v
	}
	return mem
}

// cgroupMemoryMax reads memory.max of the cgroup v2 group named in
// /proc/self/cgroup ("0::/path"); 0 if there is none or it is "max".
func cgroupMemoryMax() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		rel, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		for _, p := range []string{filepath.Join("/sys/fs/cgroup", rel, "memory.max"), "/sys/fs/cgroup/memory.max"} {
			if v, err := os.ReadFile(p); err == nil {
				n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
				if err != nil || n <= 0 {
					return 0
				}
				return n
			}
		}
	}
	return 0
}
