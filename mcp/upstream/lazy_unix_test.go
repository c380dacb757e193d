//go:build unix

package upstream

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A FIFO where a lazy server's cache entry belongs is not read (that would wait for a writer, holding start-up):
// the server starts as if it had no usable entry, and says why.
func TestLazyCacheThatIsAFIFO(t *testing.T) {
	dir := t.TempDir()
	f := newFakeServer(0)
	f.AddTool("echo", "Echo the text.", echo(""))
	closeNow(t, lazySource(t, f, dir, &syncBuffer{}))
	entries, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.NoError(t, os.Remove(entries[0]))
	require.NoError(t, syscall.Mkfifo(entries[0], 0o600))

	progress := &syncBuffer{}
	src := lazySource(t, f, dir, progress)
	assert.Equal(t, StateReady, src.Status()[0].State, "started at once")
	assert.Contains(t, progress.String(), "is not a regular file")
	closeNow(t, src)
}
