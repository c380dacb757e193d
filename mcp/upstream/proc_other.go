//go:build !unix

package upstream

import (
	"os"
	"os/exec"
)

func ownProcessGroup(*exec.Cmd) {}

// signalProcessGroup can only reach the child itself here: there are no process groups to signal.
func signalProcessGroup(pid int, _ bool) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
