package signatures_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/toolsearch/toolsearch/signatures"
)

var update = flag.Bool("update", false, "rewrite the input and output sections of testdata/golden/*.txtar")

// omitted is what a golden file's output section holds when Output is not ok. No hint can start with "(".
const omitted = "(omitted)"

// goldenCase is one testdata/golden/*.txtar file: a comment saying what the case shows, the schema, optional
// options, and the expected input and output hints.
type goldenCase struct {
	path    string
	archive *txtar.Archive
	schema  []byte
	options *signatures.Options
}

func loadGoldenCases(tb testing.TB) []goldenCase {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths)
	cases := make([]goldenCase, 0, len(paths))
	for _, path := range paths {
		archive, err := txtar.ParseFile(path)
		require.NoError(tb, err)
		c := goldenCase{path: path, archive: archive}
		schema, found := section(archive, "schema.json")
		require.True(tb, found, "%s has no schema.json section", path)
		c.schema = []byte(strings.TrimSuffix(schema, "\n"))
		if raw, found := section(archive, "options.json"); found {
			c.options = new(signatures.Options)
			require.NoError(tb, json.Unmarshal([]byte(raw), c.options), path)
		}
		cases = append(cases, c)
	}
	return cases
}

func section(archive *txtar.Archive, name string) (string, bool) {
	for _, file := range archive.Files {
		if file.Name == name {
			return string(file.Data), true
		}
	}
	return "", false
}

func setSection(archive *txtar.Archive, name, content string) {
	for i := range archive.Files {
		if archive.Files[i].Name == name {
			archive.Files[i].Data = []byte(content + "\n")
			return
		}
	}
	archive.Files = append(archive.Files, txtar.File{Name: name, Data: []byte(content + "\n")})
}

func TestGolden(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		t.Run(strings.TrimSuffix(filepath.Base(c.path), ".txtar"), func(t *testing.T) {
			input := signatures.Input(c.schema, c.options)
			output, ok := signatures.Output(c.schema, c.options)
			if !ok {
				require.Empty(t, output, "Output must not hand out a hint it does not stand behind")
				output = omitted
			}
			if *update {
				setSection(c.archive, "input", input)
				setSection(c.archive, "output", output)
				require.NoError(t, os.WriteFile(c.path, txtar.Format(c.archive), 0o644))
				return
			}
			wantInput, found := section(c.archive, "input")
			require.True(t, found, "no input section: run go test ./signatures -run TestGolden -update")
			wantOutput, found := section(c.archive, "output")
			require.True(t, found, "no output section: run go test ./signatures -run TestGolden -update")
			require.Equal(t, strings.TrimSuffix(wantInput, "\n"), input, "input hint")
			require.Equal(t, strings.TrimSuffix(wantOutput, "\n"), output, "output hint")
		})
	}
}
