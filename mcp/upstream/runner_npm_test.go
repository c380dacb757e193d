//go:build npm

package upstream

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/npmpins"
	"github.com/toolsearch/toolsearch/internal/testskip"
)

// This file is built with -tags npm (.ci/run runs it): it installs real packages from the npm registry, which
// takes minutes on a loaded machine.

// requireNPX returns npx, or skips (fails under CI=true) when npx or the npm registry cannot be reached.
func requireNPX(t *testing.T, pkg string) string {
	t.Helper()
	missing := func(what string) { testskip.Missing(t, what) }
	npx, err := exec.LookPath("npx")
	if err != nil {
		missing("npx is not installed (apt-get install npm)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "npm", "view", pkg, "version").CombinedOutput(); err != nil {
		missing("the npm registry cannot be reached: " + strings.TrimSpace(string(out)))
	}
	return npx
}

// pinnedServers are the real MCP servers the tests use, sorted by package, with "{dir}" in their args and env
// replaced by dir.
func pinnedServers(t *testing.T, dir string) []npmpins.Server {
	t.Helper()
	servers, err := npmpins.Read(filepath.Join("..", "testdata", "npm"), dir)
	require.NoError(t, err)
	return servers
}

// cpuHogs starts n processes that keep a core busy each, as a build running beside the front, and ends them
// (by pid) when the test does.
func cpuHogs(t *testing.T, n int) {
	for range n {
		hog := exec.Command("/bin/sh", "-c", "while :; do :; done")
		hog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, hog.Start())
		t.Cleanup(func() {
			_ = hog.Process.Kill()
			_ = hog.Wait()
		})
	}
}

// TestColdNpxInstallUnderLoadIsNeverInterrupted starts every pinned server (eight) with `npx -y` from one empty
// npm cache at once, as a newcomer's first `mcp serve` does, on a machine made busy by eight CPU hogs, with a
// start timeout far shorter than the installs take: a start deadline counted from the start would cut them short
// and leave the cache broken (npm does not roll back). Each must be ready at its first attempt, having taken
// longer than the start timeout, and answer a call through the Source; then each starts again from that cache
// with npm offline, through the Source and through npx itself, as the user's other MCP clients would.
func TestColdNpxInstallUnderLoadIsNeverInterrupted(t *testing.T) {
	work := t.TempDir()
	servers := pinnedServers(t, work)
	require.Len(t, servers, 8, "the issue's scenario: eight servers at once")
	npx := requireNPX(t, servers[0].Pkg)
	cache := t.TempDir()
	const timeout = 20 * time.Second
	config := func(offline bool) *Config {
		cfg := &Config{Servers: map[string]ServerConfig{}}
		for _, s := range servers {
			env := map[string]string{"npm_config_cache": cache, "npm_config_update_notifier": "false"}
			if offline {
				env["npm_config_offline"] = "true"
			}
			for k, v := range s.Env {
				env[k] = v
			}
			cfg.Servers[s.Name] = ServerConfig{Command: npx, Args: append([]string{"-y", s.Pkg}, s.Args...), Env: env,
				StartTimeoutMs: int(timeout / time.Millisecond)}
		}
		return cfg
	}
	cpuHogs(t, 8)
	progress := &syncBuffer{}
	opts := &Options{Progress: progress, RetryDelay: time.Hour} // one attempt each: it must not be cut short
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	began := time.Now()
	src, err := New(ctx, config(false), opts)
	require.NoError(t, err)
	t.Logf("cold installs of %d servers beside 8 CPU hogs took %s:\n%s", len(servers),
		time.Since(began).Round(time.Second), progress.String())
	for _, st := range src.Status() {
		assert.Equal(t, StateReady, st.State, "%s: %v", st.Name, st.Err)
		assert.Equal(t, 1, st.Attempts, st.Name)
		assert.Greater(t, st.StartTime, timeout, "%s: its install outlasted the start timeout and was not stopped", st.Name)
	}
	callEach(ctx, t, src, servers)
	require.NoError(t, src.Close(context.Background()))
	require.False(t, t.Failed())

	// From the cache alone, through a Source.
	began = time.Now()
	again, err := New(ctx, config(true), &Options{StartTimeout: 2 * time.Minute, RetryDelay: time.Hour})
	require.NoError(t, err)
	for _, st := range again.Status() {
		assert.Equal(t, StateReady, st.State, "%s starts offline from the cache: %v", st.Name, st.Err)
	}
	callEach(ctx, t, again, servers)
	require.NoError(t, again.Close(context.Background()))
	t.Logf("offline from the cache through a Source (still beside the hogs): %s", time.Since(began).Round(time.Second))
	began = time.Now()

	// And through npx itself, as any other client of the user would start it.
	for _, s := range servers {
		cfg := config(true).Servers[s.Name]
		run, cancelRun := context.WithTimeout(ctx, 2*time.Minute)
		cmd := exec.CommandContext(run, npx, cfg.Args...)
		cmd.Env = os.Environ()
		for k, v := range cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
			`"capabilities":{},"clientInfo":{"name":"npx-check","version":"1"}}}` + "\n")
		out, err := cmd.Output()
		cancelRun()
		assert.Contains(t, string(out), `"protocolVersion"`, "%s: npx answers initialize offline from the cache (%v)", s.Pkg, err)
	}
	t.Logf("offline from the cache through npx, one after another: %s", time.Since(began).Round(time.Second))
}

// callEach calls each server's harmless tool (servers.json) through src and checks its answer.
func callEach(ctx context.Context, t *testing.T, src *Source, servers []npmpins.Server) {
	t.Helper()
	tools := map[string]catalog.Tool{}
	for _, tool := range src.Tools() {
		tools[tool.ID()] = tool
	}
	for _, s := range servers {
		id := "mcp:" + s.Name + ":" + s.Tool
		tool, ok := tools[id]
		if !assert.True(t, ok, "%s is listed", id) {
			continue
		}
		res, err := tool.Handler.Call(ctx, s.Arguments)
		if !assert.NoError(t, err, id) {
			continue
		}
		var text strings.Builder
		for _, c := range res.Content {
			text.WriteString(c.Text)
		}
		assert.False(t, res.IsError, "%s: %s", id, text.String())
		assert.Contains(t, text.String(), s.Expect, id)
	}
}
