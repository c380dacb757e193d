package upstream

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInheritedEnv(t *testing.T) {
	environ := []string{"PATH=/usr/bin", "HOME=/home/me", "LC_ALL=C.UTF-8", "HTTPS_PROXY=http://proxy:3128",
		"TOOLSEARCH_MCP_TOKEN=front-secret", "GITHUB_TOKEN=ghp_for_the_github_header", "AWS_SECRET_ACCESS_KEY=x", "TERM=xterm"}
	assert.Equal(t, []string{"PATH=/usr/bin", "HOME=/home/me", "LC_ALL=C.UTF-8", "HTTPS_PROXY=http://proxy:3128", "TERM=xterm"},
		inherited(environ, "linux"))
	assert.Equal(t, []string{"Path=C:\\Windows", "HTTPS_PROXY=http://proxy:3128"},
		inherited([]string{"Path=C:\\Windows", "HTTPS_PROXY=http://proxy:3128", "TOOLSEARCH_MCP_TOKEN=x"}, "windows"))
	assert.Contains(t, BaseEnv(), "PATH")
}

func TestExpandEnv(t *testing.T) {
	lookup := func(name string) (string, bool) {
		v, ok := map[string]string{"GITHUB_TOKEN": "ghp_abc", "EMPTY": ""}[name]
		return v, ok
	}
	got, err := expandEnv(map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "AUTH": "token ${GITHUB_TOKEN}", "PLAIN": "$HOME", "E": "${EMPTY}"}, lookup)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"GITHUB_TOKEN": "ghp_abc", "AUTH": "token ghp_abc", "PLAIN": "$HOME", "E": ""}, got)
	_, err = expandEnv(map[string]string{"KEY": "${UNSET_VARIABLE_X}"}, lookup)
	require.EqualError(t, err, `env "KEY": environment variable UNSET_VARIABLE_X is not set`)

	// Claude Code's ${NAME:-default}: the default when NAME is unset or empty, NAME's value otherwise.
	got, err = expandEnv(map[string]string{"UNSET": "${UNSET_VARIABLE_X:-fallback}", "EMPTY": "${EMPTY:-d}",
		"SET": "${GITHUB_TOKEN:-d}", "NONE": "${UNSET_VARIABLE_X:-}", "PATHS": "${UNSET_VARIABLE_X:-/a:/b}/c"}, lookup)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"UNSET": "fallback", "EMPTY": "d", "SET": "ghp_abc", "NONE": "", "PATHS": "/a:/b/c"}, got)
}

// A server started as a child sees the base set, its own env and nothing else of toolsearch's environment: not
// the front's token, not the variables other servers' headers read.
func TestChildGetsOnlyItsEnvironment(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	t.Setenv("TOOLSEARCH_MCP_TOKEN", "front-secret-token")
	t.Setenv("OTHER_SERVERS_TOKEN", "ghp_meant_for_another_server")
	t.Setenv("PASSED_ON", "passed-by-name")
	out := &syncBuffer{}
	opts := fastOptions(nil)
	opts.ServerStderr = out
	src := newChildSource(t, map[string]ServerConfig{"env": {Command: "sh",
		Args: []string{"-c", `env >&2; exit 3`},
		Env:  map[string]string{"OWN": "own-value", "FROM_TOOLSEARCH": "${PASSED_ON}"}}}, opts)
	_ = src.Status()
	printed := out.String()
	require.Contains(t, printed, "[env] PATH=")
	assert.Contains(t, printed, "[env] OWN=own-value")
	assert.Contains(t, printed, "[env] FROM_TOOLSEARCH=passed-by-name")
	for _, leak := range []string{"front-secret-token", "ghp_meant_for_another_server", "PASSED_ON="} {
		assert.NotContains(t, printed, leak)
	}
}
