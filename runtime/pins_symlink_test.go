package runtime_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// A pin file kept in a dotfiles repository and linked into place is written where it lives.
func TestPinFileWritesThroughSymlinks(t *testing.T) {
	dotfiles, home := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "pins.json")
	require.NoError(t, os.WriteFile(target, []byte(`{"version": 1, "pins": {}}`), 0o640))
	link := filepath.Join(home, "pins.json")
	require.NoError(t, os.Symlink(target, link))
	pins, err := runtime.OpenPinFile(link)
	require.NoError(t, err)
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Pins: pins})
	require.False(t, callIssue(t, rt, issueTool("Create an issue.", issueSchema)).IsError)

	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&os.ModeSymlink, "the link is still a link")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Contains(t, string(data), "mcp:github:create_issue", "the pin is in the target")
	info, err = os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm())
}
