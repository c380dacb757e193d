package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// echoEnv makes this test binary play the peer of the front benchmarks: a plain MCP server written with the
// official Go SDK, as a Go server author writes one, with one tool that echoes its argument. "stdio" serves on
// standard input and output; "http" serves streamable HTTP on a loopback port it prints on standard output.
const echoEnv = "TOOLSEARCH_CMD_TEST_ECHO"

// benchBinEnv names a toolsearch binary the front benchmarks run instead of building this tree's: the way to
// measure an older commit's front against the same peer, in the same run.
const benchBinEnv = "TOOLSEARCH_BENCH_BIN"

func init() {
	if how := os.Getenv(echoEnv); how != "" {
		os.Exit(serveEcho(how))
	}
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

func newEchoServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	return srv
}

func serveEcho(how string) int {
	srv := newEchoServer()
	ctx := context.Background()
	if how == "http" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		if err := http.Serve(ln, mux); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	if err := srv.Run(ctx, &sdk.StdioTransport{}); err != nil && ctx.Err() == nil {
		return 0 // the client went away
	}
	return 0
}

// benchFrontBinary is the toolsearch binary the front benchmarks run: $TOOLSEARCH_BENCH_BIN, else this tree's.
func benchFrontBinary(tb testing.TB) string {
	if bin := os.Getenv(benchBinEnv); bin != "" {
		return bin
	}
	return toolsearchBinary(tb)
}

// echoConfig writes a config whose one server, "echo", is the echo peer on stdio.
func echoConfig(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "config.json")
	require.NoError(tb, os.WriteFile(p, fmt.Appendf(nil, `{"mcpServers": {"echo": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "stdio"}}}}`,
		os.Args[0], echoEnv), 0o600))
	return p
}

// processCPUOf is the CPU time (user and system) the process pid has used, in nanoseconds, summed over its live
// threads from the scheduler's own clock (/proc/PID/task/*/schedstat, nanoseconds; /proc/PID/stat counts ticks
// of 10 ms). A Go process does not end its threads, so no time is lost with one.
func processCPUOf(tb testing.TB, pid int) int64 {
	tb.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	require.NoError(tb, err)
	var sum int64
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
		if err != nil {
			continue // the thread ended between the listing and the read
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		require.NoError(tb, err)
		sum += n
	}
	return sum
}

// frontCall is how a client calls the echo tool through the front in one mode, and what the answer must hold:
// the echo's text itself in off mode, as a JSON string (in quotes) in the JSON answers of the other modes.
func frontCall(mode, text string) (*sdk.CallToolParams, string) {
	want := "echo: " + text
	if mode != "off" {
		quoted, _ := json.Marshal(want)
		want = string(quoted)
	}
	switch mode {
	case "off":
		return &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}, want
	case "code":
		return &sdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": `const r = await openclaw.tools.call("mcp:echo:echo", {text: ` +
			strconv.Quote(text) + `}); return r.result.content[0].text`}}, want
	}
	return &sdk.CallToolParams{Name: "tool_call", Arguments: map[string]any{"id": "mcp:echo:echo", "args": map[string]any{"text": text}}}, want
}

// checkedCall makes one call and returns an error unless its answer is a success holding want.
func checkedCall(ctx context.Context, sess *sdk.ClientSession, p *sdk.CallToolParams, want string) error {
	res, err := sess.CallTool(ctx, p)
	if err != nil {
		return fmt.Errorf("call %s: %w", p.Name, err)
	}
	if res.IsError || len(res.Content) == 0 {
		return fmt.Errorf("call %s answered an error: %+v", p.Name, res.Content)
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok || !strings.Contains(text.Text, want) {
		return fmt.Errorf("call %s answered %+v, want it to hold %q", p.Name, res.Content[0], want)
	}
	return nil
}

// callChecked is checkedCall on the test's goroutine, failing the test.
func callChecked(ctx context.Context, tb testing.TB, sess *sdk.ClientSession, p *sdk.CallToolParams, want string) {
	tb.Helper()
	if err := checkedCall(ctx, sess, p, want); err != nil {
		tb.Fatal(err)
	}
}

// stdioSession starts cmd as an MCP server on stdio and connects a client to it; both end with the test.
func stdioSession(ctx context.Context, tb testing.TB, cmd *exec.Cmd) (*sdk.ClientSession, int) {
	tb.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(tb, err)
	pid := cmd.Process.Pid
	tb.Cleanup(func() {
		_ = sess.Close()
		_ = syscall.Kill(-pid, syscall.SIGKILL) // the front's servers, if any outlived it
	})
	return sess, pid
}

// BenchmarkServeFrontCPU is the front's CPU per tool call in each mode against its peer, the echo server's own
// CPU per call when a client calls it directly. Each iteration makes one direct call and one call through
// `toolsearch mcp serve` (stdio, in front of a second echo server on stdio), so both are measured under the same
// load; the figures are the CPU time each process spent (`front-cpu-ns/op`, `peer-cpu-ns/op`) and their ratio
// (`x-peer`). Every answer is checked. The correctness twin is TestServeFrontEchoTwin.
func BenchmarkServeFrontCPU(b *testing.B) {
	bin := benchFrontBinary(b)
	cfg := echoConfig(b)
	for _, mode := range []string{"tools", "off", "code"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			peerCmd := exec.Command(os.Args[0], "-test.run=^$")
			peerCmd.Env = append(os.Environ(), echoEnv+"=stdio")
			peer, peerPID := stdioSession(ctx, b, peerCmd)
			front, frontPID := stdioSession(ctx, b, exec.Command(bin, "mcp", "serve", "--config", cfg, "--mode", mode))
			n := 0
			one := func() {
				n++
				text := "hello " + strconv.Itoa(n)
				callChecked(ctx, b, peer, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}, "echo: "+text)
				p, want := frontCall(mode, text)
				callChecked(ctx, b, front, p, want)
			}
			for range 200 { // warm both up: the front's server start, the sandbox's compilation, the pools
				one()
			}
			peerCPU, frontCPU := processCPUOf(b, peerPID), processCPUOf(b, frontPID)
			b.ResetTimer()
			for b.Loop() {
				one()
			}
			b.StopTimer()
			peerCPU, frontCPU = processCPUOf(b, peerPID)-peerCPU, processCPUOf(b, frontPID)-frontCPU
			b.ReportMetric(float64(frontCPU)/float64(b.N), "front-cpu-ns/op")
			b.ReportMetric(float64(peerCPU)/float64(b.N), "peer-cpu-ns/op")
			b.ReportMetric(float64(frontCPU)/float64(peerCPU), "x-peer")
		})
	}
}

// httpServe starts cmd, which prints its streamable-HTTP URL on a line of standard output, and returns the URL
// and the process's id; the process group ends with the test.
func httpServe(tb testing.TB, cmd *exec.Cmd, fromStderr bool) (string, int) {
	tb.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out *bufio.Scanner
	if fromStderr {
		r, err := cmd.StderrPipe()
		require.NoError(tb, err)
		out = bufio.NewScanner(r)
	} else {
		r, err := cmd.StdoutPipe()
		require.NoError(tb, err)
		out = bufio.NewScanner(r)
	}
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() { // as a service manager stops it: SIGTERM, then SIGKILL if it outstays 10 s
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	for out.Scan() {
		line := out.Text()
		if i := strings.Index(line, "http://127.0.0.1:"); i >= 0 {
			url := strings.Fields(line[i:])[0]
			go func() { // keep the pipe drained
				for out.Scan() {
				}
			}()
			return url, cmd.Process.Pid
		}
	}
	tb.Fatalf("%s printed no address", cmd.Path)
	return "", 0
}

// httpClients are the benchmark's concurrent streamable-HTTP clients.
const httpClients = 50

// httpRound has each of the sessions make calls calls at once, all checked, and returns the round's wall time
// and every call's latency.
func httpRound(ctx context.Context, tb testing.TB, sessions []*sdk.ClientSession, calls int, call func(text string) (*sdk.CallToolParams, string)) (time.Duration, []time.Duration) {
	lat := make([][]time.Duration, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	began := time.Now()
	for i, s := range sessions {
		wg.Go(func() {
			for j := range calls {
				p, want := call(fmt.Sprintf("c%d-%d", i, j))
				t0 := time.Now()
				if errs[i] = checkedCall(ctx, s, p, want); errs[i] != nil {
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	return time.Since(began), slices.Concat(lat...)
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// httpSessions connects n clients to url.
func httpSessions(ctx context.Context, tb testing.TB, url string, n int) []*sdk.ClientSession {
	tb.Helper()
	out := make([]*sdk.ClientSession, n)
	for i := range out {
		client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		sess, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
		require.NoError(tb, err)
		tb.Cleanup(func() { _ = sess.Close() })
		out[i] = sess
	}
	return out
}

// BenchmarkServeHTTP50 is 50 streamable-HTTP clients calling at once, through `toolsearch mcp serve --http`
// (tools mode, tool_call, in front of the echo server on stdio) against its peer, the echo server's own
// streamable HTTP called directly. Each iteration is one round of each (every client makes 20 calls), the
// peer's first; the figures are the calls per second of each (`front-calls/s`, `peer-calls/s`, and `x-peer`,
// the front's share of the peer's), the 99th percentile of one call's latency (`front-p99-ms`, `peer-p99-ms`,
// `p99-x-peer`), and the CPU time per call of the front process alone and of the peer (`front-cpu-ns/call`,
// `peer-cpu-ns/call`): on a machine whose cores the clients, the front and the servers share, the
// throughput follows the CPU all of them spend per call. Every answer is checked; the correctness twin is
// TestServeHTTP50Twin.
func BenchmarkServeHTTP50(b *testing.B) {
	ctx := context.Background()
	peer, front, peerPID, frontPID := startHTTPPair(b)
	peerS, frontS := httpSessions(ctx, b, peer, httpClients), httpSessions(ctx, b, front, httpClients)
	direct := func(text string) (*sdk.CallToolParams, string) {
		return &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}, "echo: " + text
	}
	tools := func(text string) (*sdk.CallToolParams, string) { return frontCall("tools", text) }
	httpRound(ctx, b, peerS, 4, direct) // warm up
	httpRound(ctx, b, frontS, 4, tools)
	const calls = 20
	var peerWall, frontWall time.Duration
	var peerLat, frontLat []time.Duration
	var peerCPU, frontCPU int64
	b.ResetTimer()
	for b.Loop() {
		c := processCPUOf(b, peerPID)
		w, l := httpRound(ctx, b, peerS, calls, direct)
		peerWall, peerLat, peerCPU = peerWall+w, append(peerLat, l...), peerCPU+processCPUOf(b, peerPID)-c
		c = processCPUOf(b, frontPID)
		w, l = httpRound(ctx, b, frontS, calls, tools)
		frontWall, frontLat, frontCPU = frontWall+w, append(frontLat, l...), frontCPU+processCPUOf(b, frontPID)-c
	}
	b.StopTimer()
	total := float64(b.N * httpClients * calls)
	peerRate, frontRate := total/peerWall.Seconds(), total/frontWall.Seconds()
	b.ReportMetric(frontRate, "front-calls/s")
	b.ReportMetric(peerRate, "peer-calls/s")
	b.ReportMetric(frontRate/peerRate, "x-peer")
	pp, fp := percentile(peerLat, 0.99), percentile(frontLat, 0.99)
	b.ReportMetric(float64(fp.Microseconds())/1000, "front-p99-ms")
	b.ReportMetric(float64(pp.Microseconds())/1000, "peer-p99-ms")
	b.ReportMetric(float64(fp)/float64(pp), "p99-x-peer")
	b.ReportMetric(float64(frontCPU)/total, "front-cpu-ns/call")
	b.ReportMetric(float64(peerCPU)/total, "peer-cpu-ns/call")
}

// startHTTPPair starts the echo server on streamable HTTP and `toolsearch mcp serve --http` in front of the
// echo server on stdio, and returns both URLs and process ids.
func startHTTPPair(tb testing.TB) (peer, front string, peerPID, frontPID int) {
	peerCmd := exec.Command(os.Args[0], "-test.run=^$")
	peerCmd.Env = append(os.Environ(), echoEnv+"=http")
	peer, peerPID = httpServe(tb, peerCmd, false)
	front, frontPID = httpServe(tb, exec.Command(benchFrontBinary(tb), "mcp", "serve", "--config", echoConfig(tb), "--mode", "tools",
		"--http", "127.0.0.1:0"), true)
	return peer, front, peerPID, frontPID
}

// TestServeFrontEchoTwin is the correctness twin of BenchmarkServeFrontCPU: in every mode, calls through the
// front are answered with exactly what the echo server answers directly.
func TestServeFrontEchoTwin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the toolsearch binary")
	}
	bin := toolsearchBinary(t)
	cfg := echoConfig(t)
	ctx := context.Background()
	peerCmd := exec.Command(os.Args[0], "-test.run=^$")
	peerCmd.Env = append(os.Environ(), echoEnv+"=stdio")
	peer, _ := stdioSession(ctx, t, peerCmd)
	for _, mode := range []string{"tools", "off", "code"} {
		t.Run(mode, func(t *testing.T) {
			front, _ := stdioSession(ctx, t, exec.Command(bin, "mcp", "serve", "--config", cfg, "--mode", mode))
			for i := range 20 {
				text := fmt.Sprintf("twin %d \"quoted\" ü", i)
				callChecked(ctx, t, peer, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}, "echo: "+text)
				p, want := frontCall(mode, text)
				callChecked(ctx, t, front, p, want)
			}
		})
	}
}

// TestServeHTTP50Twin is the correctness twin of BenchmarkServeHTTP50: 50 clients calling at once, through the
// front and directly, each get their own answer to every call.
func TestServeHTTP50Twin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the toolsearch binary")
	}
	ctx := context.Background()
	peer, front, _, _ := startHTTPPair(t)
	direct := func(text string) (*sdk.CallToolParams, string) {
		return &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}, "echo: " + text
	}
	_, lat := httpRound(ctx, t, httpSessions(ctx, t, peer, httpClients), 5, direct)
	require.Len(t, lat, httpClients*5)
	_, lat = httpRound(ctx, t, httpSessions(ctx, t, front, httpClients), 5, func(text string) (*sdk.CallToolParams, string) {
		return frontCall("tools", text)
	})
	require.Len(t, lat, httpClients*5)
}
