//go:build unix

package upstream

import (
	"os/exec"
	"syscall"
)

func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalProcessGroup sends SIGTERM, or SIGKILL when kill is set, to the group the child leads. The kernel does
// not hand a group id to a new group while any member of the old one lives, so a live group is always ours; once
// every member is gone the signal finds no group.
func signalProcessGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pid, sig)
}
