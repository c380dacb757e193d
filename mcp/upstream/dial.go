package upstream

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// dialConfigured opens the transport a ServerConfig describes.
func dialConfigured(_ context.Context, u *server) (*dialed, error) {
	if u.config().URL != "" {
		return dialHTTP(u, os.LookupEnv)
	}
	return dialCommand(u)
}

// dialCommand starts the child process with pipes of our own (not the SDK's CommandTransport), so that the
// process's whole life — its group id, its exit, how it is stopped — is known here without racing the SDK. The
// child gets its own process group, so that stopping it also stops what it spawned (npx runs the real server
// as a grandchild).
func dialCommand(u *server) (*dialed, error) {
	if err := checkCommand(u.config()); err != nil {
		return nil, err
	}
	env, err := expandEnv(u.config().Env, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	cmd := exec.Command(u.config().Command, u.config().Args...)
	cmd.Env = mergeEnv(mergeEnv(inherited(os.Environ(), goruntime.GOOS), u.src.opts.childEnv), env)
	cmd.Dir = u.config().Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, u.stderr
	// A grandchild that keeps stderr open must not keep Wait waiting.
	cmd.WaitDelay = u.src.opts.closeTimeout / 4
	ownProcessGroup(cmd)
	reap := startReaper()
	err = cmd.Start()
	stdinR.Close() // the child has its own copies now
	stdoutW.Close()
	if err != nil {
		reap.stop()
		stdinW.Close()
		stdoutR.Close()
		return nil, err
	}
	reap.watch(cmd.Process.Pid)
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{}), reaper: reap}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.state, p.err = cmd.ProcessState, err
		p.mu.Unlock()
		close(p.exited)
	}()
	// Lines that are not JSON-RPC (a banner, a log line) are skipped as other clients skip them.
	stdout := readCloser{Reader: newNoiseFilter(stdoutR, u.noiseReport), Closer: stdoutR}
	transport := &sdk.IOTransport{Reader: stdout, Writer: seam.NewBoundedWriter(stdinW, u.src.opts.callTimeout),
		MaxLineLength: MaxMessageBytes}
	return &dialed{transport: transport, stop: p.stop, terminate: p.terminate, exit: p.describe, pgid: p.pid}, nil
}

// checkCommand names what is missing before a start fails with an error that points elsewhere: exec reports a
// missing working directory as "fork/exec /usr/bin/npx: no such file or directory", as if npx were missing.
func checkCommand(cfg ServerConfig) error {
	if cfg.Cwd != "" {
		info, err := os.Stat(cfg.Cwd)
		switch {
		case err != nil:
			return fmt.Errorf("the working directory %q (cwd) does not exist", cfg.Cwd)
		case !info.IsDir():
			return fmt.Errorf("the working directory %q (cwd) is not a directory", cfg.Cwd)
		}
	}
	if _, err := exec.LookPath(cfg.Command); err != nil {
		if strings.ContainsRune(cfg.Command, os.PathSeparator) {
			return fmt.Errorf("the program %q (command) cannot be run: %w", cfg.Command, err)
		}
		return fmt.Errorf("the program %q (command) is not in PATH: %w", cfg.Command, err)
	}
	return nil
}

// readCloser reads from one thing and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// process is a started child and its exit.
type process struct {
	pid    int
	exited chan struct{}
	reaper *reaper // kills the group if this process dies first; stopped once the group is stopped here

	mu    sync.Mutex
	state *os.ProcessState
	err   error
}

// stop ends the process group by the stdio shutdown sequence of the MCP spec, bounded by deadline: the session
// has already closed stdin, so wait for the exit, then SIGTERM, then SIGKILL. The group is killed even after a
// clean exit, for whatever the server spawned and left behind. A past deadline kills at once.
func (p *process) stop(deadline time.Time) {
	wait := func(until time.Time) bool {
		timer := time.NewTimer(time.Until(until))
		defer timer.Stop()
		select {
		case <-p.exited:
			return true
		case <-timer.C:
			return false
		}
	}
	half := time.Now().Add(time.Until(deadline) / 2)
	if !wait(half) {
		signalProcessGroup(p.pid, false)
		wait(deadline)
	}
	signalProcessGroup(p.pid, true)
	wait(time.Now().Add(killGrace))
	p.reaper.stop()
}

// terminate ends the process group of a start that failed, while the server may still be installing itself:
// SIGTERM, up to grace for the exit, then SIGKILL.
func (p *process) terminate(grace time.Duration) {
	signalProcessGroup(p.pid, false)
	timer := time.NewTimer(max(grace, 0))
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
	}
	signalProcessGroup(p.pid, true)
	select {
	case <-p.exited:
	case <-time.After(killGrace):
	}
	p.reaper.stop()
}

// describe says how the process ended ("exit status 1", "signal: killed"), or "" while it runs.
func (p *process) describe() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != nil {
		return p.state.String()
	}
	if p.err != nil {
		return p.err.Error()
	}
	return ""
}

// mergeEnv adds the configured variables to the inherited environment, replacing inherited ones of the same
// name, in a deterministic order.
func mergeEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, replaced := extra[name]; !replaced {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// killGrace is how long a killed process group gets to be reaped before stop returns.
const killGrace = 100 * time.Millisecond

// dialFunc opens a transport to one server. stop ends whatever the dial started outside the session (a process
// group) by deadline: it is called after the session closed or failed to close in time, may be called more than
// once and concurrently, and kills at once when deadline has passed. exit, when set, describes how the server
// ended ("exit status 1"), for error messages.
type dialFunc func(ctx context.Context, u *server) (*dialed, error)

type dialed struct {
	transport sdk.Transport
	stop      func(deadline time.Time)
	// terminate, when set, ends a process whose start failed gently: SIGTERM, then SIGKILL after the grace.
	terminate func(grace time.Duration)
	exit      func() string
	// pgid is the process group the dial started (0: none), whose activity tells a runner's progress.
	pgid int
	// filtersListings is set by a transport that applies the listing filter itself (streamable HTTP, whose
	// connection the SDK must see unwrapped); every other transport gets listingTransport around it.
	filtersListings bool
}
