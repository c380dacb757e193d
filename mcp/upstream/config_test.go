package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		servers int
		problem string // "" when valid
	}{
		{"command", `{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"], "env": {"K": "v"}, "cwd": "/tmp"}}}`, 1, ""},
		{"url", `{"mcpServers": {"a": {"url": "https://example.com/mcp", "headers": {"X": "y"}}}}`, 1, ""},
		{"typed", `{"mcpServers": {"a": {"type": "stdio", "command": "x"}, "b": {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"}}}`, 2, ""},
		{"client keys tolerated", `{"mcpServers": {"a": {"command": "x", "autoApprove": [], "timeout": 60}}}`, 1, ""},
		{"comments and commas", "{\n// servers\n\"mcpServers\": {\"a\": {\"command\": \"x\",},},}", 1, ""},
		{"no section", `{"tools": {"toolSearch": true}}`, 0, ""},
		{"empty", ``, 0, ""},
		{"neither", `{"mcpServers": {"a": {"args": ["x"]}}}`, 0, `server "a": needs "command" or "url"`},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "https://e"}}}`, 0, `has both "command" and "url"`},
		{"sse", `{"mcpServers": {"a": {"type": "sse", "url": "https://e/sse"}}}`, 0, `type "sse"`},
		{"unknown type", `{"mcpServers": {"a": {"type": "websocket", "url": "wss://e"}}}`, 0, `unknown type "websocket"`},
		{"http without url", `{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, 0, `type "http" needs "url"`},
		{"stdio with url", `{"mcpServers": {"a": {"type": "stdio", "url": "https://e"}}}`, 0, `type "stdio" needs "command"`},
		{"headers on command", `{"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}`, 0, `"headers" apply to a "url" server only`},
		{"args on url", `{"mcpServers": {"a": {"url": "https://e", "args": ["x"]}}}`, 0, `apply to a "command" server only`},
		{"relative url", `{"mcpServers": {"a": {"url": "/mcp"}}}`, 0, "must be an absolute http or https URL"},
		{"ftp url", `{"mcpServers": {"a": {"url": "ftp://e/mcp"}}}`, 0, "must be an absolute http or https URL"},
		{"section not an object", `{"mcpServers": ["a"]}`, 0, "must be an object of servers"},
		{"server not an object", `{"mcpServers": {"a": "npx x"}}`, 0, `server "a"`},
		{"wrong field type", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, 0, `server "a"`},
		{"not JSON", `{"mcpServers": `, 0, "mcp config"},
		{"instance cap", `{"mcpServers": {"a": {"command": "x", "isolation": "per-client", "maxInstances": 1000}}}`, 1, ""},
		{"negative instance cap", `{"mcpServers": {"a": {"command": "x", "isolation": "per-client", "maxInstances": -1}}}`, 0,
			`server "a": "maxInstances" must be between 0 (the default) and 1000, not -1`},
		{"huge instance cap", `{"mcpServers": {"a": {"command": "x", "isolation": "per-client", "maxInstances": 1001}}}`, 0,
			`"maxInstances" must be between 0 (the default) and 1000, not 1001`},
		{"instance cap of a shared server", `{"mcpServers": {"a": {"command": "x", "maxInstances": 4}}}`, 0,
			`server "a": "maxInstances" applies to an "isolation": "per-client" server only`},
		{"every problem at once", `{"mcpServers": {"a": {}, "b": {"type": "sse", "url": "https://e"}}}`, 0, `server "a": needs "command" or "url"; server "b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.doc))
			if tc.problem != "" {
				require.ErrorIs(t, err, ErrConfig)
				assert.Contains(t, err.Error(), tc.problem)
				return
			}
			require.NoError(t, err)
			assert.Len(t, cfg.Servers, tc.servers)
		})
	}
}

func TestLoadConfig(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "a missing server list is an error, never an empty list")
	require.ErrorIs(t, err, ErrConfig)

	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"a": {}}}`), 0o600))
	_, err = LoadConfig(path)
	require.ErrorIs(t, err, ErrConfig)
	assert.Contains(t, err.Error(), path)
}

func TestNewRefusesInvalidConfigAndSkipsDisabled(t *testing.T) {
	_, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{"a": {}}}, nil)
	require.ErrorIs(t, err, ErrConfig)

	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo(""))
	cfg := inMemoryConfig("on", "off")
	off := cfg.Servers["off"]
	off.Disabled = true
	cfg.Servers["off"] = off
	src := startSource(t, cfg, nil, map[string]dialFunc{"on": f.dial})
	require.Len(t, src.Status(), 1)
	assert.Equal(t, "on", src.Status()[0].Name)

	empty, err := New(t.Context(), nil, nil)
	require.NoError(t, err, "no servers is a valid, empty source")
	assert.Empty(t, empty.Tools())
	require.NoError(t, empty.Close(t.Context()))
}

func TestOptionsDefaults(t *testing.T) {
	o := (*Options)(nil).resolve()
	assert.Equal(t, DefaultStartTimeout, o.startTimeout)
	assert.Equal(t, DefaultCallTimeout, o.callTimeout)
	assert.Equal(t, DefaultCloseTimeout, o.closeTimeout)
	assert.Equal(t, DefaultRetryDelay, o.retryDelay)
	assert.Equal(t, DefaultMaxRetryDelay, o.maxRetryDelay)
	assert.Equal(t, DefaultMaxClientInstances, o.maxInstances)
	o = (&Options{RetryDelay: 2 * time.Minute}).resolve()
	assert.Equal(t, 2*time.Minute, o.maxRetryDelay, "the cap is never below the first delay")
}

// TestHammer calls tools from many goroutines while the server's tools change and its connection is cut: every
// call ends in a result or a *ServerError, and the race detector sees no unsynchronized access.
func TestHammer(t *testing.T) {
	f := newFakeServer(3)
	for i := range 5 {
		f.AddTool(fmt.Sprintf("echo_%d", i), "Echo.", echo(""))
	}
	src := startSource(t, inMemoryConfig("fake"), fastOptions(nil), map[string]dialFunc{"fake": f.dial})
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			if i%5 == 4 {
				f.Sever()
			} else {
				f.AddTool(fmt.Sprintf("extra_%d", i), "Added under load.", echo(""))
			}
			_ = src.Status()
		}
	}()

	const workers, calls = 8, 40
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				tools := src.Tools()
				if len(tools) == 0 {
					continue
				}
				tool := tools[(w+i)%len(tools)]
				res, err := tool.Handler.Call(context.Background(), []byte(`{"text":"x"}`))
				var se *ServerError
				switch {
				case err == nil && res != nil:
					ok.Add(1)
				case errors.As(err, &se):
					failed.Add(1)
				default:
					t.Errorf("call %s: want a result or a *ServerError, got %v", tool.ID(), err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	churn.Wait()
	t.Logf("%d calls succeeded, %d failed while the server was cut", ok.Load(), failed.Load())
	assert.Positive(t, ok.Load())
}
