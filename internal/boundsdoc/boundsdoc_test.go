package boundsdoc

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListedTestsExist: every test docs/bounds.md names exists in the package it names, so the table cannot
// point at a test that was renamed or removed.
func TestListedTestsExist(t *testing.T) {
	path, err := Path()
	require.NoError(t, err)
	rows, err := Read(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rows), 20)
	root := filepath.Dir(filepath.Dir(path))
	for _, r := range rows {
		require.NotEmpty(t, r.Tests, "%s names no test", r.Ident)
		for _, name := range r.Tests {
			i := strings.LastIndex(name, ".")
			require.Positive(t, i, "%q is not <package>.<Test>", name)
			dir, fn := filepath.Join(root, filepath.FromSlash(name[:i])), name[i+1:]
			files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
			require.NoError(t, err)
			decl := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(fn) + `\(`)
			found := false
			for _, f := range files {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				if decl.Match(b) {
					found = true
					break
				}
			}
			assert.True(t, found, "docs/bounds.md names %s (for %s), which does not exist", name, r.Ident)
		}
	}
}

func TestReadRefusesAMalformedRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bounds.md")
	require.NoError(t, os.WriteFile(path, []byte("| bound | default | where | tests |\n|---|---|---|---|\n| a | `1` | `x.Y` |\n"), 0o600))
	_, err := Read(path)
	require.Error(t, err)
}
