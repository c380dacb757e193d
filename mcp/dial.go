package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// dialConfigured opens the transport a ServerConfig describes.
func dialConfigured(_ context.Context, u *upstream) (*dialed, error) {
	if u.cfg.URL != "" {
		return dialHTTP(u), nil
	}
	return dialCommand(u)
}

// dialCommand starts the child process with pipes of our own (not the SDK's CommandTransport), so that the
// process's whole life — its group id, its exit, how it is stopped — is known here without racing the SDK. The
// child gets its own process group, so that stopping it also stops what it spawned (npx runs the real server
// as a grandchild).
func dialCommand(u *upstream) (*dialed, error) {
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
	cmd := exec.Command(u.cfg.Command, u.cfg.Args...)
	cmd.Env = mergeEnv(os.Environ(), u.cfg.Env)
	cmd.Dir = u.cfg.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, u.stderr
	// A grandchild that keeps stderr open must not keep Wait waiting.
	cmd.WaitDelay = u.src.opts.closeTimeout / 4
	ownProcessGroup(cmd)
	err = cmd.Start()
	stdinR.Close() // the child has its own copies now
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, err
	}
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.state, p.err = cmd.ProcessState, err
		p.mu.Unlock()
		close(p.exited)
	}()
	return &dialed{
		transport: &sdk.IOTransport{Reader: stdoutR, Writer: newBoundedWriter(stdinW, u.src.opts.callTimeout)},
		stop:      p.stop,
		exit:      p.describe,
	}, nil
}

// boundedWriter bounds each write to a server's input by a deadline. The SDK does not watch contexts while it
// writes, so once a server stops reading (it hangs, or is stopped) and the pipe is full, a request would hold its
// call — and every call and ping queued behind it — past any timeout. A write that times out may have left half a
// message behind, so every later write fails too: the session ends and the Source reconnects. Where the platform
// has no deadlines on pipes, writes are unbounded.
type boundedWriter struct {
	w     deadlineWriteCloser
	limit time.Duration

	mu  sync.Mutex
	err error
}

type deadlineWriteCloser interface {
	io.WriteCloser
	SetWriteDeadline(time.Time) error
}

func newBoundedWriter(w deadlineWriteCloser, limit time.Duration) *boundedWriter {
	return &boundedWriter{w: w, limit: limit}
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	_ = b.w.SetWriteDeadline(time.Now().Add(b.limit))
	n, err := b.w.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		b.err = fmt.Errorf("the server read none of its input for %s: %w", b.limit, err)
		err = b.err
	}
	return n, err
}

func (b *boundedWriter) Close() error { return b.w.Close() }

// process is a started child and its exit.
type process struct {
	pid    int
	exited chan struct{}

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
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// dialHTTP connects to a streamable HTTP endpoint with a transport of its own, so that stopping the server
// drops its idle connections without touching anyone else's.
func dialHTTP(u *upstream) *dialed {
	base := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: &headerTransport{base: base, headers: u.cfg.Headers}}
	return &dialed{
		transport: &sdk.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: client},
		stop:      func(time.Time) { base.CloseIdleConnections() },
	}
}

// headerTransport adds the configured headers (an API key, say) to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}

// stderrTail keeps the last bytes a child wrote to stderr, for failure messages, and optionally forwards each
// line with the server's name in front.
type stderrTail struct {
	prefix  string
	forward io.Writer

	mu      sync.Mutex
	buf     []byte // the last stderrTailBytes bytes
	partial []byte // an unfinished line waiting to be forwarded
}

const stderrTailBytes = 4 << 10

func newStderrTail(name string, forward io.Writer) *stderrTail {
	return &stderrTail{prefix: "[" + name + "] ", forward: forward}
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrTailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrTailBytes:]...)
	}
	if t.forward != nil {
		t.partial = append(t.partial, p...)
		for {
			i := bytes.IndexByte(t.partial, '\n')
			if i < 0 {
				break
			}
			fmt.Fprintf(t.forward, "%s%s\n", t.prefix, t.partial[:i])
			t.partial = t.partial[i+1:]
		}
		if len(t.partial) > stderrTailBytes {
			t.partial = t.partial[:0] // a line that long is noise, not a message
		}
	}
	return len(p), nil
}

// reset forgets what an earlier process wrote, so failures quote only the current one.
func (t *stderrTail) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.buf[:0]
}

// lastLine is the last non-empty line written, cut to 300 bytes.
func (t *stderrTail) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}

// killGrace is how long a killed process group gets to be reaped before stop returns.
const killGrace = 100 * time.Millisecond
