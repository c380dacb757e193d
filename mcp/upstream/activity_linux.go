package upstream

import (
	"os"
	"strconv"
	"strings"
)

// groupActivity is what the live processes of process group pgid have done so far: their CPU time and the bytes
// they read and wrote (sockets and pipes included), summed from /proc, and a sum of their pids, which changes
// when one starts or ends.
func groupActivity(pgid int) activity {
	var a activity
	eachLiveInGroup(pgid, func(pid int, f []string) {
		utime, _ := strconv.ParseUint(f[11], 10, 64)
		stime, _ := strconv.ParseUint(f[12], 10, 64)
		a.cpuTicks += utime + stime
		a.pids += uint64(pid)
		if io, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io"); err == nil {
			for _, line := range strings.Split(string(io), "\n") {
				name, value, ok := strings.Cut(line, ": ")
				if ok && (name == "rchar" || name == "wchar") {
					n, _ := strconv.ParseUint(value, 10, 64)
					a.ioBytes += n
				}
			}
		}
	})
	return a
}

// eachLiveInGroup calls fn for every process of group pgid that is not a zombie, with the fields of its
// /proc/<pid>/stat after the command name (f[0] the state, f[2] the group, f[11] and f[12] utime and stime).
func eachLiveInGroup(pgid int, fn func(pid int, f []string)) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces: the fields that matter follow its last ')'.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 13 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			fn(pid, f)
		}
	}
}
