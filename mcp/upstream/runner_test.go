package upstream

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/toolsearch/toolsearch/internal/testskip"
)

func TestPackageRunner(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
		want    bool
	}{
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, true},
		{"/usr/local/bin/npx", nil, true},
		{"NPX.EXE", nil, true},
		{"uvx", []string{"mcp-server-git"}, true},
		{"pipx", []string{"run", "mcp-server-time"}, true},
		{"bunx", nil, true},
		{"pnpx", nil, true},
		{"npm", []string{"exec", "pkg"}, true},
		{"pnpm", []string{"dlx", "pkg"}, true},
		{"yarn", []string{"dlx", "pkg"}, true},
		{"bun", []string{"x", "pkg"}, true},
		{"uv", []string{"tool", "run", "pkg"}, true},
		{"docker", []string{"run", "-i", "--rm", "mcp/fetch"}, true},
		{"podman", []string{"run", "img"}, true},
		{"npm", []string{"start"}, false},
		{"docker", []string{"exec", "c"}, false},
		{"node", []string{"server.js"}, false},
		{"python3", []string{"-m", "mcp_server_time"}, false},
	} {
		_, got := packageRunner(tc.command, tc.args)
		assert.Equal(t, tc.want, got, "%s %v", tc.command, tc.args)
	}
}

func TestStartTimeoutPrecedence(t *testing.T) {
	src := &Source{opts: (&Options{}).resolve()}
	npx := ServerConfig{Command: "npx", Args: []string{"-y", "pkg"}}
	node := ServerConfig{Command: "node", Args: []string{"server.js"}}
	startTimeout := func(src *Source, cfg ServerConfig) time.Duration {
		return (&server{src: src, cfg: cfg}).startTimeout()
	}

	assert.Equal(t, DefaultPackageRunnerStartTimeout, startTimeout(src, npx), "a package runner gets time for a cold fetch")
	assert.Equal(t, DefaultStartTimeout, startTimeout(src, node))
	own := npx
	own.StartTimeoutMs = 5000
	assert.Equal(t, 5*time.Second, startTimeout(src, own), "the server's own startTimeoutMs wins")
	set := &Source{opts: (&Options{StartTimeout: 7 * time.Second}).resolve()}
	assert.Equal(t, 7*time.Second, startTimeout(set, npx), "so does one the program set")
	assert.Equal(t, 5*time.Second, startTimeout(set, own))

	u := &server{src: src, cfg: npx}
	assert.Equal(t, DefaultPackageRunnerStartTimeout/4, u.retryDelay(time.Second, true), "a timed-out install is not restarted at once")
	assert.Equal(t, time.Second, u.retryDelay(time.Second, false))
	assert.Equal(t, time.Second, (&server{src: src, cfg: node}).retryDelay(time.Second, true))
}

// requireNPX returns npx, or skips (fails under CI=true) when npx or the npm registry cannot be reached.
func requireNPX(t *testing.T) string {
	t.Helper()
	missing := func(what string) { testskip.Missing(t, what) }
	npx, err := exec.LookPath("npx")
	if err != nil {
		missing("npx is not installed (apt-get install npm)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "npm", "view", coldPackage, "version").CombinedOutput(); err != nil {
		missing("the npm registry cannot be reached: " + strings.TrimSpace(string(out)))
	}
	return npx
}

const coldPackage = "@modelcontextprotocol/server-memory@2026.8.31"

// TestColdNpxStartInterruptedLeavesACleanCache starts a real `npx -y` server from an empty npm cache, the way a
// newcomer's first `mcp serve` does, and makes its start time out in the middle of the install, at several
// points of it. Then the same server starts cleanly from that cache, through the Source and for anyone else
// running npx on it: a start that runs out of time must never break the user's other tools.
func TestColdNpxStartInterruptedLeavesACleanCache(t *testing.T) {
	npx := requireNPX(t)
	cache := t.TempDir()
	cfg := ServerConfig{Command: npx, Args: []string{"-y", coldPackage}, Env: map[string]string{
		"npm_config_cache":           cache,
		"npm_config_update_notifier": "false",
		"MEMORY_FILE_PATH":           filepath.Join(t.TempDir(), "memory.jsonl"),
	}}
	start := func(timeoutMs int) (*Source, Status) {
		c := cfg
		c.StartTimeoutMs = timeoutMs
		src, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{"memory": c}},
			&Options{RetryDelay: time.Hour, ServerStderr: nil})
		require.NoError(t, err)
		return src, src.Status()[0]
	}

	// The starts are cut short at growing times: the first five at fixed points of a cold install, then, on a
	// machine so loaded that npm had not yet begun to write its cache by then, later ones until one is cut short
	// after it had. What proves something is an interruption in the middle of filling the cache, not a time.
	interrupted, midFill := 0, false
	for i, ms := range []int{1000, 2000, 3000, 4000, 5000, 7500, 11000, 16000, 24000, 36000} {
		if i >= 5 && midFill {
			break
		}
		src, st := start(ms)
		if st.State == StateFailed && errors.Is(st.Err, context.DeadlineExceeded) {
			interrupted++
			// npx killed outright leaves its lock behind, and every later npx of the package waits on it.
			locks, err := filepath.Glob(filepath.Join(cache, "_npx", "*", "concurrency.lock"))
			require.NoError(t, err)
			assert.Empty(t, locks, "the start interrupted after %d ms left npx's lock in the cache", ms)
			if _, err := os.Stat(filepath.Join(cache, "_cacache")); err == nil {
				midFill = true
			}
		}
		require.NoError(t, src.Close(context.Background()))
		if st.State == StateReady {
			break // the cache is complete: later starts would interrupt nothing
		}
	}
	require.True(t, midFill, "no start was cut short after npm had begun to fill its cache (%d were cut short "+
		"before): the test proves nothing on this machine", interrupted)

	src, st := start(0)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
	require.Equal(t, StateReady, st.State, "the server starts from the cache the interrupted starts left: %v", st.Err)
	assert.Positive(t, st.Tools)
	res, err := call(t, src, "read_graph", `{}`)
	require.NoError(t, err)
	assert.False(t, res.isError, res.text)

	// And the user's other clients: npx itself starts the server from that cache.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, "-y", coldPackage)
	cmd.Env = append(os.Environ(), "npm_config_cache="+cache, "npm_config_update_notifier=false")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"npx-check","version":"1"}}}` + "\n")
	out, _ := cmd.Output()
	assert.Contains(t, string(out), `"protocolVersion"`, "npx answers initialize from the same cache")
}
