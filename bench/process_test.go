package bench

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Process memory as the OS sees it. Linear memory lives outside the Go heap (reserved address space on Linux),
// so runtime.MemStats alone would miss it: what a script costs the host is measured as resident memory.

// procStatus reads one "Vm..." field of /proc/self/status, in bytes.
func procStatus(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no " + field + " in /proc/self/status")
}

// residentBytes is the process's resident set size, or, where /proc is missing, the Go heap and stacks in use
// (the sandbox keeps linear memory on the Go heap on those systems).
func residentBytes() int64 {
	if rss, err := procStatus("VmRSS"); err == nil {
		return rss
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// resetPeakResident makes VmHWM start again from the current RSS (Linux 4.0+), so one process can measure the
// peak of several runs one after another.
func resetPeakResident() error { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakResidentBytes is VmHWM: the highest RSS since the process started or resetPeakResident.
func peakResidentBytes() (int64, error) { return procStatus("VmHWM") }
