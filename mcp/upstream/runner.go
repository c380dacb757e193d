package upstream

import (
	"path/filepath"
	"strings"
	"time"
)

// DefaultPackageRunnerStartTimeout is the start timeout of a server started by a package runner (npx, uvx,
// pipx, bunx, docker run, ...) when neither its config nor Options.StartTimeout sets one. A runner's start
// timeout counts from its last sign of progress (startclock.go), so an install that keeps working is never cut
// short by it; this is how long a runner may do nothing at all before it is stopped.
const DefaultPackageRunnerStartTimeout = 2 * time.Minute

// stopGrace is how long a server whose start failed gets between SIGTERM and SIGKILL. A package runner killed
// outright in the middle of an install damages the user's cache: npx killed 2 s into a cold `npx -y` left its
// concurrency.lock in ~/.npm/_npx, and every later npx of that package, Claude Desktop's included, waited on it
// for more than 90 s. Sent SIGTERM at any point of the install, npx exited within 1.3 s and left nothing behind.
const stopGrace = 10 * time.Second

// packageRunner reports whether a command fetches or installs the server it starts, and names the runner.
func packageRunner(command string, args []string) (string, bool) {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(command)), ".exe")
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	switch base {
	case "npx", "pnpx", "bunx", "uvx", "pipx":
		return base, true
	case "npm":
		return "npm exec", first == "exec" || first == "x"
	case "pnpm", "yarn":
		return base + " dlx", first == "dlx"
	case "bun":
		return "bun x", first == "x"
	case "uv":
		return "uv run", first == "run" || first == "tool"
	case "docker", "podman":
		return base + " run", first == "run"
	}
	return "", false
}

// startTimeout bounds one attempt to start, initialize and list, and one relisting: the server's own
// startTimeoutMs, else Options.StartTimeout, else the default for the kind of command.
func (u *server) startTimeout() time.Duration {
	switch {
	case u.config().StartTimeoutMs > 0:
		return time.Duration(u.config().StartTimeoutMs) * time.Millisecond
	case u.src.opts.startTimeoutSet:
		return u.src.opts.startTimeout
	}
	if _, ok := packageRunner(u.config().Command, u.config().Args); ok && u.config().URL == "" {
		return DefaultPackageRunnerStartTimeout
	}
	return u.src.opts.startTimeout
}

// retryDelay is the wait before the next attempt: the backoff, and for a package runner whose attempt ran out
// of time at least a quarter of its start timeout, so that a slow install is not restarted every few seconds.
func (u *server) retryDelay(backoff time.Duration, timedOut bool) time.Duration {
	if _, ok := packageRunner(u.config().Command, u.config().Args); ok && timedOut {
		return max(backoff, u.startTimeout()/4)
	}
	return backoff
}

// stopStarting ends what a failed start left running: SIGTERM to its process group, then SIGKILL after
// stopGrace (sooner when the Source is closing).
func (u *server) stopStarting(conn *dialed) {
	if conn == nil {
		return
	}
	if conn.terminate == nil {
		u.stop(conn, time.Now())
		return
	}
	grace := stopGrace
	if closing, d := u.src.closing(); closing {
		grace = min(grace, time.Until(d))
	}
	conn.terminate(grace)
}
