package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/filelock"
)

// A config file whose lock another process holds is not edited: UpdateFile gives up after lockTimeout (or when
// its context ends) with ErrLocked, and the file is as it was. Once the lock is free, the edit lands.
func TestUpdateFileWaitsForTheLockNoLonger(t *testing.T) {
	path := writeFile(t, "config.json5", "{tools: {toolSearch: true}}\n")
	release, err := filelock.Lock(t.Context(), filepath.Join(filepath.Dir(path), ".config.json5.lock"), time.Second)
	require.NoError(t, err)
	old := lockTimeout
	lockTimeout = 50 * time.Millisecond
	defer func() { lockTimeout = old }()

	edited := false
	edit := func(f *File) error {
		edited = true
		_, err := f.Set("tools.toolSearch.mode", []byte(`"tools"`))
		return err
	}
	err = UpdateFile(t.Context(), path, edit)
	require.ErrorIs(t, err, ErrLocked)
	assert.False(t, edited, "nothing is read or edited without the lock")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	lockTimeout = time.Hour // only the context can end this wait
	err = UpdateFile(ctx, path, edit)
	require.ErrorIs(t, err, ErrLocked)
	require.True(t, errors.Is(err, context.Canceled), "the caller's context ended the wait: %v", err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{tools: {toolSearch: true}}\n", string(data))

	release()
	require.NoError(t, UpdateFile(t.Context(), path, edit))
	assert.True(t, edited)
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), `mode: "tools"`)
}
