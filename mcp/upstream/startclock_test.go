package upstream

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// A package runner that works longer than its start timeout is not stopped while it shows progress; one that
// does nothing is stopped after the start timeout; and the same work by a command that is no runner (the
// control) is stopped by the plain timeout, which shows the work outlasts it.
func TestRunnerStartCountsFromLastProgress(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("progress is sampled from /proc, which this system lacks")
	}
	dir := t.TempDir()
	npx := filepath.Join(dir, "npx") // what packageRunner goes by: the test binary under a runner's name
	require.NoError(t, os.Symlink(os.Args[0], npx))
	const timeout = 2 * time.Second
	const installSeconds = "6" // three start timeouts
	withEnv := func(cfg ServerConfig, k, v string) ServerConfig {
		env := map[string]string{k: v}
		for name, value := range cfg.Env {
			env[name] = value
		}
		cfg.Env = env
		return cfg
	}
	runner := func(behavior string) ServerConfig {
		cfg := childConfig(behavior)
		cfg.Command = npx
		return cfg
	}
	cfg := &Config{Servers: map[string]ServerConfig{
		"installing": withEnv(runner("install"), "INSTALL_SECONDS", installSeconds),
		"stuck":      runner("hang"),
		"control":    withEnv(childConfig("install"), "INSTALL_SECONDS", installSeconds),
	}}
	opts := fastOptions(nil)
	opts.StartTimeout = timeout
	opts.RetryDelay, opts.MaxRetryDelay = time.Hour, time.Hour // each server's first attempt is what is checked
	src, err := New(t.Context(), cfg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })

	installing := statusOf(t, src, "installing")
	require.Equal(t, StateReady, installing.State, "%v", installing.Err)
	assert.Greater(t, installing.StartTime, timeout, "it worked past the start timeout and was not stopped")

	stuck := statusOf(t, src, "stuck")
	require.Equal(t, StateFailed, stuck.State)
	assert.ErrorIs(t, stuck.Err, context.DeadlineExceeded)
	assert.Contains(t, stuck.Err.Error(), "no sign of progress (CPU, reads and writes, output) for 2s")

	control := statusOf(t, src, "control")
	require.Equal(t, StateFailed, control.State, "the control's work outlasts the start timeout")
	assert.ErrorIs(t, control.Err, context.DeadlineExceeded)
	assert.Contains(t, control.Err.Error(), "no answer within 2s")
}

// TestRunnerInstallingIsReported: while a package runner's start shows progress, its status names the runner (the
// front tells the model it is installing); a server started by any other command doing the same work is only
// starting, and the runner's name is gone once it is ready.
func TestRunnerInstallingIsReported(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("progress is sampled from /proc, which this system lacks")
	}
	npx := filepath.Join(t.TempDir(), "npx")
	require.NoError(t, os.Symlink(os.Args[0], npx))
	installing := childConfig("install")
	installing.Command = npx
	installing.Env = map[string]string{"INSTALL_SECONDS": "4"}
	for k, v := range childConfig("install").Env {
		installing.Env[k] = v
	}
	control := childConfig("install")
	control.Env = installing.Env
	opts := fastOptions(nil)
	opts.StartTimeout = time.Minute
	started, cancel := context.WithCancel(t.Context())
	cancel() // New returns at once; the servers start in the background
	src, err := New(started, &Config{Servers: map[string]ServerConfig{"installing": installing, "control": control}}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })

	var seen Status
	require.Eventually(t, func() bool {
		seen = statusOf(t, src, "installing")
		return seen.Installer != "" || seen.State != StateStarting
	}, time.Minute, 20*time.Millisecond)
	require.Equal(t, StateStarting, seen.State, "it was seen installing before it was ready")
	assert.Equal(t, "npx", seen.Installer)
	assert.Empty(t, statusOf(t, src, "control").Installer, "not a package runner")

	require.Eventually(t, func() bool { return statusOf(t, src, "installing").State == StateReady }, 2*time.Minute, 20*time.Millisecond)
	assert.Empty(t, statusOf(t, src, "installing").Installer, "ready: nothing is being installed")
}

// A package runner that keeps showing progress is still stopped once it has worked twice its start timeout
// (the cap, lowered here from MaxProgressingStart so that twice the timeout is what ends it): it is the cap
// that stops it, not the start timeout, which its progress keeps pushing back.
func TestRunnerStartIsCappedWhileProgressing(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("progress is sampled from /proc, which this system lacks")
	}
	old := progressingStartCap
	progressingStartCap = 0
	defer func() { progressingStartCap = old }()
	npx := filepath.Join(t.TempDir(), "npx")
	require.NoError(t, os.Symlink(os.Args[0], npx))
	const timeout = 2 * time.Second
	cfg := childConfig("install")
	cfg.Command = npx
	cfg.Env["INSTALL_SECONDS"] = "12" // three times the cap
	opts := fastOptions(nil)
	opts.StartTimeout = timeout
	opts.RetryDelay, opts.MaxRetryDelay = time.Hour, time.Hour
	began := time.Now()
	src, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{"installing": cfg}}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })

	st := statusOf(t, src, "installing")
	require.Equal(t, StateFailed, st.State)
	assert.ErrorIs(t, st.Err, context.DeadlineExceeded)
	assert.Contains(t, st.Err.Error(), "the most a start may take even while npx works")
	assert.GreaterOrEqual(t, time.Since(began), 2*timeout, "its progress kept it past the start timeout until the cap")
}

// A client's own session of a per-client server is clocked as the shared one is: a package runner that installs
// for three start timeouts when the client's session starts is not stopped, while the same work by a command that
// is no runner (the control) is stopped by the plain timeout. The shared sessions start at once; the install is
// switched on before the clients call.
func TestPerClientRunnerStartCountsFromLastProgress(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("progress is sampled from /proc, which this system lacks")
	}
	dir := t.TempDir()
	npx := filepath.Join(dir, "npx")
	require.NoError(t, os.Symlink(os.Args[0], npx))
	marker := filepath.Join(dir, "install-now")
	const timeout = 2 * time.Second
	perClient := func(command string) ServerConfig {
		cfg := childConfig("install")
		cfg.Command = command
		cfg.Env["INSTALL_SECONDS"] = "6" // three start timeouts
		cfg.Env["INSTALL_IF_FILE"] = marker
		cfg.Isolation = IsolationPerClient
		return cfg
	}
	opts := fastOptions(nil)
	opts.StartTimeout = timeout
	opts.RetryDelay, opts.MaxRetryDelay = time.Hour, time.Hour
	cfg := &Config{Servers: map[string]ServerConfig{"installing": perClient(npx), "control": perClient(os.Args[0])}}
	src, err := New(t.Context(), cfg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
	for _, name := range []string{"installing", "control"} {
		require.Equal(t, StateReady, statusOf(t, src, name).State, "%s's shared session started at once", name)
	}
	require.NoError(t, os.WriteFile(marker, nil, 0o600))

	call := func(server string) (time.Duration, error) {
		c := testClient(src)
		defer c.Close()
		for _, tool := range src.Tools() {
			if tool.SourceName == server && tool.Name == "echo" {
				began := time.Now()
				_, err := tool.Handler.Call(seam.WithCall(t.Context(), &seam.Call{Client: c}), json.RawMessage(`{"text":"x"}`))
				return time.Since(began), err
			}
		}
		t.Fatalf("no echo tool of %s", server)
		return 0, nil
	}
	took, err := call("installing")
	require.NoError(t, err, "the client's own runner worked past the start timeout and was not stopped")
	assert.Greater(t, took, timeout)
	_, err = call("control")
	require.Error(t, err, "the control's work outlasts the start timeout")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, "no answer within 2s")
}
