package npmpins

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadThePinnedServers(t *testing.T) {
	servers, err := Read(filepath.Join("..", "..", "mcp", "testdata", "npm"), "/work")
	require.NoError(t, err)
	require.Len(t, servers, 8, "eight real servers, as the cold-install tests promise")
	for _, s := range servers {
		assert.Contains(t, s.Pkg, "@", s.Name)
		assert.NotEmpty(t, s.Tool, s.Name)
		for _, a := range s.Args {
			assert.NotContains(t, a, "{dir}", s.Name)
		}
	}
}

func TestReadRefusesDrift(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	write("package.json", `{"dependencies": {"a": "1.0.0", "b": "2.0.0"}}`)
	write("servers.json", `{"servers": {"a": {"name": "a", "tool": "t"}}}`)
	_, err := Read(dir, "")
	assert.ErrorContains(t, err, "servers.json does not say how to start and call b")
	write("servers.json", `{"servers": {"a": {"name": "a"}, "b": {"name": "b"}, "c": {"name": "c"}}}`)
	_, err = Read(dir, "")
	assert.ErrorContains(t, err, "must describe only pinned packages")
}
