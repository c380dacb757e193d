package main

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"

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
