package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/front"
)

func TestListenAddr(t *testing.T) {
	for _, tt := range []struct {
		flag, addr, note, err string
		loopback              bool
	}{
		{flag: "127.0.0.1:8000", addr: "127.0.0.1:8000", loopback: true},
		{flag: "localhost", addr: "localhost:8931", note: "--http localhost has no port: listening on localhost:8931", loopback: true},
		{flag: "127.0.0.1", addr: "127.0.0.1:8931", note: "--http 127.0.0.1 has no port: listening on 127.0.0.1:8931", loopback: true},
		{flag: "::1", addr: "[::1]:8931", note: "--http ::1 has no port: listening on [::1]:8931", loopback: true},
		{flag: "[::1]", addr: "[::1]:8931", note: "--http [::1] has no port: listening on [::1]:8931", loopback: true},
		{flag: "0.0.0.0", addr: "0.0.0.0:8931", note: "--http 0.0.0.0 has no port: listening on 0.0.0.0:8931"},
		{flag: ":8931", addr: ":8931"},
		{flag: "8931", err: "--http 8931 has no host: write 127.0.0.1:8931 to serve this machine only, or :8931 to " +
			"listen on every interface (which needs a token)"},
		{flag: "localhost:abc", err: `--http localhost:abc: the port "abc" is not a number from 0 to 65535: write ` +
			`localhost:8931`},
		{flag: ":http", err: `--http :http: the port "http" is not a number from 0 to 65535: write 127.0.0.1:8931`},
		{flag: "127.0.0.1:70000", err: `--http 127.0.0.1:70000: the port "70000" is not a number from 0 to 65535: ` +
			`write 127.0.0.1:8931`},
		{flag: "http://localhost:8931", err: `--http "http://localhost:8931" is not a listen address: want HOST:PORT, ` +
			`for example 127.0.0.1:8931`},
	} {
		addr, note, err := listenAddr(tt.flag)
		if tt.err != "" {
			assert.EqualError(t, err, tt.err, tt.flag)
			continue
		}
		assert.NoError(t, err, tt.flag)
		assert.Equal(t, tt.addr, addr, tt.flag)
		assert.Equal(t, tt.note, note, tt.flag)
		assert.Equal(t, tt.loopback, front.IsLoopbackAddr(addr), "%s is loopback", tt.flag)
	}
}

// `--http localhost` is loopback, not "reachable from other machines": it needs no token.
func TestMCPServeHTTPHostWithoutPort(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	t.Setenv(tokenEnv, "")
	code, _, stderr := runCLI(t, "", "mcp", "serve", "--config", cfg, "--http", "0.0.0.0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--http 0.0.0.0 has no port: listening on 0.0.0.0:8931")
	assert.Contains(t, stderr, "--http 0.0.0.0:8931 can be reached from other machines")
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--config", cfg, "--http", "8931")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--http 8931 has no host")
}

// FuzzListenAddr: listenAddr never panics, and what it accepts is an address net.Listen reads (host and port),
// loopback exactly when the host is.
func FuzzListenAddr(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1:0", "::1", "[::1]", ":8931", "8931", "0.0.0.0", "[", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, flag string) {
		addr, _, err := listenAddr(flag)
		if err != nil {
			return
		}
		host, _, err := net.SplitHostPort(addr)
		if !assert.NoError(t, err, "%q gave %q", flag, addr) {
			return
		}
		if addr != flag { // a host alone: its loopback-ness is the host's
			assert.Equal(t, front.IsLoopbackAddr(net.JoinHostPort(host, "1")), front.IsLoopbackAddr(addr))
		}
	})
}

// Each bound of the HTTP server cuts a connection that overstays it: headers trickled in, a kept-alive connection
// left idle, headers too large. The bounds here are short; the defaults are checked below.
func TestMCPServeHTTPConnectionLimits(t *testing.T) {
	start := func(t *testing.T, lim httpLimits) string {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		hs := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }), lim)
		go func() { _ = hs.Serve(ln) }()
		t.Cleanup(func() { _ = hs.Close() })
		return ln.Addr().String()
	}
	// closedWithin reads conn until the server closes it; a bound that does not hold leaves it open past wait.
	closedWithin := func(t *testing.T, conn net.Conn, wait time.Duration) {
		t.Helper()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(wait)))
		_, err := io.Copy(io.Discard, conn)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server still held the connection after %s", wait)
	}
	long := time.Minute

	t.Run("headers trickled in", func(t *testing.T) {
		addr := start(t, httpLimits{readHeader: 200 * time.Millisecond, idle: long, maxHeader: 64 << 10})
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n") // and never the blank line
		require.NoError(t, err)
		closedWithin(t, conn, 10*time.Second)
	})
	t.Run("an idle kept-alive connection", func(t *testing.T) {
		addr := start(t, httpLimits{readHeader: long, idle: 200 * time.Millisecond, maxHeader: 64 << 10})
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, "ok", string(body), "the connection served a request and stays open for the next")
		closedWithin(t, conn, 10*time.Second)
	})
	t.Run("headers too large", func(t *testing.T) {
		addr := start(t, httpLimits{readHeader: long, idle: long, maxHeader: 4 << 10})
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "+strings.Repeat("a", 64<<10)+"\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	})
	t.Run("defaults", func(t *testing.T) {
		lim := defaultHTTPLimits()
		hs := newHTTPServer(http.NotFoundHandler(), lim)
		// Long enough for any client on a slow link, short enough that a connection flood drains by itself.
		assert.Equal(t, 10*time.Second, hs.ReadHeaderTimeout)
		assert.Equal(t, time.Minute, hs.IdleTimeout)
		assert.Equal(t, 64<<10, hs.MaxHeaderBytes)
		assert.Zero(t, hs.WriteTimeout, "a write timeout would cut a session's event stream")
		assert.Zero(t, hs.ReadTimeout, "the front bounds a body's time itself (RequestBodyTimeout)")
	})
}
