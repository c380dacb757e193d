//go:build unix

package upstream

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// reaperScript waits for its standard input to end and then kills the process group whose id came first on it.
// Its input is a pipe whose only writer is this process, which never writes past the group id: the pipe ends
// when this process dies, however it dies (SIGKILL included), and never before. Signals a terminal sends
// to a whole group (Ctrl-C) are ignored, so that it outlives a front stopped that way.
const reaperScript = `trap '' INT TERM HUP QUIT; read pgid; read _; [ -n "$pgid" ] && kill -9 -"$pgid" 2>/dev/null; exit 0`

// reaper is the small process that stops a server's process group if the front dies without stopping it. A
// parent-death signal (Linux's PR_SET_PDEATHSIG) would reach only the group leader (npx), not what it started
// (npm, the server), and it fires when the thread that forked exits, which a Go program does not control.
type reaper struct {
	cmd  *exec.Cmd
	w    *os.File
	once sync.Once
}

// startReaper starts the reaper before the server, so that no moment passes with a server and no reaper. Where
// it cannot start (no /bin/sh, no file descriptors left) it returns nil: the server is still stopped by every
// orderly exit, and failing its start for want of a safety net would be worse.
func startReaper() *reaper {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", reaperScript)
	cmd.Stdin = r
	// A group of its own: a signal to the front's group (a terminal's Ctrl-C, kill -- -pgid) does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil
	}
	return &reaper{cmd: cmd, w: w}
}

// watch hands the reaper the group to kill.
func (r *reaper) watch(pgid int) {
	if r == nil {
		return
	}
	_, _ = r.w.WriteString(strconv.Itoa(pgid) + "\n")
}

// stop ends the reaper without letting it kill anything: the group is stopped by the caller, and once it is gone
// its id may be another group's. It may be called more than once.
func (r *reaper) stop() {
	if r == nil {
		return
	}
	r.once.Do(func() {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.w.Close()
	})
}
