package upstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
