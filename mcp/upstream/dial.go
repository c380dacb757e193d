package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// dialConfigured opens the transport a ServerConfig describes.
func dialConfigured(_ context.Context, u *server) (*dialed, error) {
	if u.cfg.URL != "" {
		return dialHTTP(u, os.LookupEnv)
	}
	return dialCommand(u)
}

// dialCommand starts the child process with pipes of our own (not the SDK's CommandTransport), so that the
// process's whole life — its group id, its exit, how it is stopped — is known here without racing the SDK. The
// child gets its own process group, so that stopping it also stops what it spawned (npx runs the real server
// as a grandchild).
func dialCommand(u *server) (*dialed, error) {
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
	cmd.Env = mergeEnv(mergeEnv(os.Environ(), u.src.opts.childEnv), u.cfg.Env)
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
	transport := &sdk.IOTransport{Reader: stdoutR, Writer: newBoundedWriter(stdinW, u.src.opts.callTimeout),
		MaxLineLength: MaxMessageBytes}
	return &dialed{transport: transport, stop: p.stop, exit: p.describe}, nil
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
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// dialHTTP connects to a streamable HTTP endpoint with a transport of its own, so that stopping the server
// drops its idle connections without touching anyone else's. The headers' ${NAME} references are resolved from
// lookup now, at each start, so a variable set later is picked up by the next retry.
func dialHTTP(u *server, lookup func(string) (string, bool)) (*dialed, error) {
	headers, secrets, err := expandHeaders(u.cfg.Headers, lookup)
	if err != nil {
		return nil, err
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt := &httpUpstream{base: base, headers: headers, secrets: secrets}
	return &dialed{
		transport: &sdk.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: &http.Client{Transport: rt},
			// Events were bounded by MaxMessageBytes as they arrived; rewriting a listing may make them larger.
			MaxEventSize: 3 * MaxMessageBytes},
		stop:            func(time.Time) { base.CloseIdleConnections() },
		filtersListings: true,
	}, nil
}

// httpUpstream is the HTTP side of one streamable HTTP server. It adds the configured headers to every request
// and stands between the server's answers and the SDK: every message is bounded by MaxMessageBytes (the SDK reads
// a JSON body whole, without a bound), has the header secrets scrubbed out (a server that echoes a token must not
// put it into an error, a log or the model's context), and tools/list results go through the listing filter.
type httpUpstream struct {
	base    http.RoundTripper
	headers map[string]string
	secrets [][]byte
	pending pendingLists
}

// maxPeekBytes bounds the request bodies read to see whether they are tools/list requests, which are small.
const maxPeekBytes = 64 << 10

func (t *httpUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	if req.Method == http.MethodPost && req.GetBody != nil && req.ContentLength <= maxPeekBytes {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(io.LimitReader(body, maxPeekBytes))
			body.Close()
			if bytes.Contains(data, []byte(`"tools/list"`)) {
				if msg, err := jsonrpc.DecodeMessage(data); err == nil {
					t.pending.noteRequest(msg)
				}
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mediaType == "text/event-stream" {
		resp.Body = &eventFilter{t: t, body: resp.Body, r: bufio.NewReader(resp.Body)}
	} else {
		resp.Body = &messageBody{t: t, body: resp.Body}
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	return resp, nil
}

// errMessageTooLarge ends a connection whose server sent a message over MaxMessageBytes.
var errMessageTooLarge = fmt.Errorf("a message from the server is larger than %d bytes", MaxMessageBytes)

// rewrite applies the scrubbing and, for the response to a pending tools/list, the listing filter to one
// message.
func (t *httpUpstream) rewrite(msg []byte) []byte {
	msg = scrub(msg, t.secrets)
	if t.pending.empty() {
		return msg
	}
	decoded, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return msg
	}
	resp, ok := decoded.(*jsonrpc.Response)
	if !ok || !t.pending.take(resp.ID) || resp.Error != nil {
		return msg
	}
	resp.Result = filterToolsPage(resp.Result)
	if out, err := jsonrpc.EncodeMessage(resp); err == nil {
		return out
	}
	return msg
}

// messageBody is a response body read whole (within MaxMessageBytes) and rewritten before the SDK reads it.
type messageBody struct {
	t    *httpUpstream
	body io.ReadCloser
	out  *bytes.Reader
	err  error
}

func (m *messageBody) Read(p []byte) (int, error) {
	if m.out == nil && m.err == nil {
		data, err := io.ReadAll(io.LimitReader(m.body, MaxMessageBytes+1))
		switch {
		case err != nil:
			m.err = err
		case len(data) > MaxMessageBytes:
			m.err = errMessageTooLarge
		default:
			m.out = bytes.NewReader(m.t.rewrite(data))
		}
	}
	if m.err != nil {
		return 0, m.err
	}
	return m.out.Read(p)
}

func (m *messageBody) Close() error { return m.body.Close() }

// eventFilter rewrites a server-sent event stream event by event: each event's data is one message.
type eventFilter struct {
	t    *httpUpstream
	body io.ReadCloser
	r    *bufio.Reader
	out  []byte
	err  error
}

func (f *eventFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.out, f.err = f.nextEvent()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

func (f *eventFilter) Close() error { return f.body.Close() }

// nextEvent reads the lines of one event up to its blank line and returns them rewritten: the other fields as
// they came, the data as one line. An event cut off by the end of the stream is passed on scrubbed, for the
// SDK to discard.
func (f *eventFilter) nextEvent() ([]byte, error) {
	var fields, data [][]byte
	size := 0
	for {
		line, err := f.readLine(MaxMessageBytes - size)
		size += len(line)
		if err != nil {
			if errors.Is(err, io.EOF) {
				var out []byte
				for _, l := range append(fields, line) {
					out = append(out, scrub(l, f.t.secrets)...)
				}
				for _, d := range data {
					out = append(append(append(out, "data: "...), scrub(d, f.t.secrets)...), '\n')
				}
				return out, io.EOF
			}
			return nil, err
		}
		content := bytes.TrimRight(line, "\r\n")
		if len(content) == 0 {
			break
		}
		if value, ok := bytes.CutPrefix(content, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(value, []byte(" ")))
			continue
		}
		fields = append(fields, line)
	}
	var out []byte
	for _, l := range fields {
		out = append(out, scrub(l, f.t.secrets)...)
	}
	if len(data) > 0 {
		msg := f.t.rewrite(bytes.Join(data, []byte("\n")))
		// A message on several data lines is one JSON value with line breaks in it: one line carries it as well.
		msg = bytes.ReplaceAll(msg, []byte("\n"), []byte(" "))
		out = append(append(append(out, "data: "...), msg...), '\n')
	}
	return append(out, '\n'), nil
}

// readLine reads one line, ending in \n or at the end of the stream, of at most limit bytes.
func (f *eventFilter) readLine(limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, errMessageTooLarge
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
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
		t.buf = append(t.buf[:0], textcut.Suffix(t.buf, stderrTailBytes)...)
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
	return cutUTF8(strings.TrimSpace(lines[len(lines)-1]), 300)
}

// killGrace is how long a killed process group gets to be reaped before stop returns.
const killGrace = 100 * time.Millisecond
