//go:build npm

package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolsearch/toolsearch/internal/testskip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// pinnedServers are the real MCP servers the tests use, name@version, as mcp/testdata/npm/package.json pins them.
func pinnedServers(t *testing.T) []string {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "npm", "package.json"))
	require.NoError(t, err)
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	require.NoError(t, json.Unmarshal(data, &pkg))
	var out []string
	for name, version := range pkg.Dependencies {
		out = append(out, name+"@"+version)
	}
	sort.Strings(out)
	require.NotEmpty(t, out)
	return out
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

// TestColdNpxInstallUnderLoadIsNeverInterrupted starts every pinned server with `npx -y` from one empty npm cache
// at once, as a newcomer's first `mcp serve` does, on a machine made busy by eight CPU hogs, with a start timeout
// far shorter than the installs take: a start deadline counted from the start would cut them short and leave
// the cache broken (npm does not roll back). Each must be ready at its first attempt, having taken longer than
// the start timeout; then each starts again from that cache with npm offline, through the Source and through npx
// itself, as the user's other MCP clients would.
func TestColdNpxInstallUnderLoadIsNeverInterrupted(t *testing.T) {
	pkgs := pinnedServers(t)
	npx := requireNPX(t, pkgs[0])
	cache := t.TempDir()
	work := t.TempDir()
	const timeout = 3 * time.Second
	env := func(offline bool) map[string]string {
		e := map[string]string{"npm_config_cache": cache, "npm_config_update_notifier": "false",
			"MEMORY_FILE_PATH": filepath.Join(work, "memory.jsonl")}
		if offline {
			e["npm_config_offline"] = "true"
		}
		return e
	}
	config := func(offline bool) *Config {
		cfg := &Config{Servers: map[string]ServerConfig{}}
		for _, pkg := range pkgs {
			args := []string{"-y", pkg}
			if strings.Contains(pkg, "server-filesystem") {
				args = append(args, work)
			}
			if strings.Contains(pkg, "server-everything") {
				args = append(args, "stdio")
			}
			cfg.Servers[serverName(pkg)] = ServerConfig{Command: npx, Args: args, Env: env(offline),
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
	t.Logf("cold installs under load took %s:\n%s", time.Since(began).Round(time.Second), progress.String())
	for _, st := range src.Status() {
		assert.Equal(t, StateReady, st.State, "%s: %v", st.Name, st.Err)
		assert.Equal(t, 1, st.Attempts, st.Name)
		assert.Greater(t, st.StartTime, timeout, "%s: its install outlasted the start timeout and was not stopped", st.Name)
	}
	require.NoError(t, src.Close(context.Background()))
	require.False(t, t.Failed())

	// From the cache alone, through a Source.
	again, err := New(ctx, config(true), &Options{StartTimeout: 2 * time.Minute, RetryDelay: time.Hour})
	require.NoError(t, err)
	for _, st := range again.Status() {
		assert.Equal(t, StateReady, st.State, "%s starts offline from the cache: %v", st.Name, st.Err)
	}
	require.NoError(t, again.Close(context.Background()))

	// And through npx itself, as any other client of the user would start it.
	for _, pkg := range pkgs {
		cfg := config(true).Servers[serverName(pkg)]
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
		assert.Contains(t, string(out), `"protocolVersion"`, "%s: npx answers initialize offline from the cache (%v)", pkg, err)
	}
}

// serverName is a pinned package's server name: "@modelcontextprotocol/server-memory@1" → "memory".
func serverName(pkg string) string {
	name := pkg[strings.LastIndex(pkg, "/")+1:]
	name, _, _ = strings.Cut(name, "@")
	return fmt.Sprint(strings.TrimPrefix(name, "server-"))
}
