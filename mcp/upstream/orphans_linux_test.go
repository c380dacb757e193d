package upstream

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoOrphansAfterSIGKILL kills a front with SIGKILL while its server starts (a child that never answers
// initialize, with a grandchild working, as npx installing) and while it runs (a server that ignores SIGTERM,
// with a grandchild), and checks that nothing of the server's process group is left.
func TestNoOrphansAfterSIGKILL(t *testing.T) {
	for _, tc := range []struct{ behavior, wait string }{
		{"hang", "grandchild"},
		{"stubborn", "mcp: s: ready"},
	} {
		t.Run(tc.behavior, func(t *testing.T) {
			front := exec.Command(os.Args[0], "-test.run=^$")
			front.Env = append(os.Environ(), frontEnv+"="+tc.behavior)
			stderr, err := front.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, front.Start())
			killed := false
			t.Cleanup(func() {
				if !killed {
					_ = front.Process.Kill()
					_ = front.Wait()
				}
			})
			var child, grandchild int
			lines := bufio.NewScanner(stderr)
			for lines.Scan() {
				line := lines.Text()
				t.Log(line)
				if n, ok := strings.CutPrefix(line, "[s] pid "); ok {
					child, _ = strconv.Atoi(n)
				}
				if n, ok := strings.CutPrefix(line, "[s] grandchild "); ok {
					grandchild, _ = strconv.Atoi(n)
				}
				if child != 0 && grandchild != 0 && strings.Contains(line, tc.wait) {
					break
				}
			}
			require.NotZero(t, child, "the server's pid")
			require.NotZero(t, grandchild, "its grandchild's pid")
			require.True(t, running(child) && running(grandchild), "both run before the front is killed")
			go func() { _, _ = bufio.NewReader(stderr).WriteTo(new(strings.Builder)) }()

			require.NoError(t, front.Process.Signal(syscall.SIGKILL))
			_ = front.Wait()
			killed = true
			// The reaper acts within milliseconds of the front's death; ten seconds is for a machine so loaded
			// that a shell takes that long to be scheduled.
			deadline := time.Now().Add(10 * time.Second)
			for groupAlive(child) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			assert.False(t, groupAlive(child), "a process of the server's group %d outlived the front", child)
			assert.False(t, running(grandchild), "the grandchild %d outlived the front", grandchild)
			if t.Failed() {
				_ = syscall.Kill(-child, syscall.SIGKILL)
			}
		})
	}
}

// running reports whether pid is a process that is not a zombie (a zombie whose parent died waits for pid 1 to
// reap it, which in a container may never happen: it runs nothing).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}

// groupAlive reports whether any process that is not a zombie is in process group pgid.
func groupAlive(pgid int) bool {
	alive := false
	eachLiveInGroup(pgid, func(int, []string) { alive = true })
	return alive
}
