package toolsearch_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoFiles lists the repository's own files with one of exts, skipping installed dependencies and VCS data.
func repoFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		for _, ext := range exts {
			if strings.HasSuffix(path, ext) {
				files = append(files, path)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// TestNoOutsideDocuments keeps the repository self-contained: a reader has only what is in it, so no comment or
// page may send them to a design document that lives elsewhere. Say what the reader needs where it is needed,
// or in RATIONALE.md or docs/.
func TestNoOutsideDocuments(t *testing.T) {
	// Built from parts so that this file does not match itself.
	forbidden := []string{"SP" + "EC §", "SP" + "EC.md", "DES" + "IGN.md", "ENGINE-" + "NOTES", "STY" + "LE.md",
		"/work/" + "shared"}
	for _, path := range repoFiles(t, ".go", ".md", ".txtar", ".js") {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		for i, line := range strings.Split(string(data), "\n") {
			for _, f := range forbidden {
				if strings.Contains(line, f) {
					t.Errorf("%s:%d cites %q, which is not in this repository: say what the reader needs here, "+
						"in RATIONALE.md or in docs/", path, i+1, f)
				}
			}
		}
	}
}

var (
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeFence    = regexp.MustCompile("(?s)```.*?```")
	inlineCode   = regexp.MustCompile("`[^`\n]*`")
	headingLine  = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	notSlugChar  = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// TestMarkdownLinksResolve checks every relative link of every Markdown file: the file must exist, and a
// #fragment must name a heading of the page it points to.
func TestMarkdownLinksResolve(t *testing.T) {
	checked := 0
	for _, path := range repoFiles(t, ".md") {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		text := inlineCode.ReplaceAllString(codeFence.ReplaceAllString(string(data), ""), "")
		for _, m := range markdownLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, fragment, _ := strings.Cut(target, "#")
			resolved := path
			if file != "" {
				resolved = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
			}
			info, err := os.Stat(resolved)
			if !assert.NoError(t, err, "%s links to %s, which does not exist", path, target) {
				continue
			}
			if fragment != "" && !info.IsDir() && strings.HasSuffix(resolved, ".md") {
				assert.Contains(t, headingAnchors(t, resolved), fragment, "%s links to %s: no such heading", path, target)
			}
		}
	}
	assert.NotZero(t, checked, "the link extractor found no relative link at all")
}

// headingAnchors returns the anchors GitHub generates for the headings of a Markdown file.
func headingAnchors(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var anchors []string
	seen := map[string]int{}
	for _, m := range headingLine.FindAllStringSubmatch(codeFence.ReplaceAllString(string(data), ""), -1) {
		slug := strings.ReplaceAll(strings.ToLower(notSlugChar.ReplaceAllString(m[1], "")), " ", "-")
		if n := seen[slug]; n > 0 {
			anchors = append(anchors, slug+"-"+strconv.Itoa(n))
		} else {
			anchors = append(anchors, slug)
		}
		seen[slug]++
	}
	return anchors
}

// TestRationaleStaysShort keeps RATIONALE.md a list of decisions in force: one short "Why …?" each. Measurements
// and the variants that did not ship belong in docs/ (docs/search-experiments.md for ranking), where a table of
// figures does not bury the reason a reader came for.
func TestRationaleStaysShort(t *testing.T) {
	const maxSectionLines = 36
	data, err := os.ReadFile("RATIONALE.md")
	require.NoError(t, err)
	sections := regexp.MustCompile(`(?m)^## `).Split(string(data), -1)[1:]
	require.NotEmpty(t, sections)
	for _, section := range sections {
		title, _, _ := strings.Cut(section, "\n")
		assert.True(t, strings.HasPrefix(title, "Why "), "section %q: every section answers a \"Why …?\"", title)
		lines := strings.Count(strings.TrimRight(section, "\n"), "\n") + 1
		assert.LessOrEqual(t, lines, maxSectionLines, "section %q has %d lines: keep the reason here and move the "+
			"measurements to docs/", title, lines)
		for i, line := range strings.Split(section, "\n") {
			assert.False(t, strings.HasPrefix(line, "|"), "section %q line %d: a table of figures belongs in docs/",
				title, i+1)
		}
	}
}
