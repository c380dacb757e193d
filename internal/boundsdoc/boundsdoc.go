// Package boundsdoc reads docs/bounds.md, the table of the product's bounds, their shipped defaults and the
// tests that trip them, for those tests: each package's TestShippedBounds checks that its defaults are the ones
// the table states, so a default changed in the code (or in the table alone) fails a test until both agree.
package boundsdoc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Row is one bound of the table.
type Row struct {
	Bound   string   // what is bounded, in words
	Default string   // the shipped default as Go prints it (fmt.Sprint), or "rule" for a rule without a value
	Ident   string   // where the product reads it: "<package dir>.<identifier>", e.g. "mcp/front.DefaultMaxSessions"
	Tests   []string // the tests that trip it: "<package dir>.<TestName>"
}

// Path finds docs/bounds.md from the working directory of a test (any package of the module).
func Path() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "docs", "bounds.md"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("boundsdoc: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Read parses the table's rows: every line "| bound | default | `ident` | tests |" after the header.
func Read(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| bound ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("boundsdoc: %q: want 4 cells, got %d", line, len(cells))
		}
		clean := func(s string) string { return strings.Trim(strings.TrimSpace(s), "`") }
		def := strings.Fields(clean(cells[1]))
		if len(def) == 0 {
			return nil, fmt.Errorf("boundsdoc: %q: no default", line)
		}
		r := Row{Bound: strings.TrimSpace(cells[0]), Default: strings.Trim(def[0], "`"), Ident: clean(cells[2])}
		for _, t := range strings.Split(cells[3], ",") {
			if t = clean(t); t != "" {
				r.Tests = append(r.Tests, t)
			}
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// Check fails t unless the table's defaults of package pkg ("mcp/front") are exactly got (identifier → value,
// compared as fmt.Sprint prints it): a row of pkg missing from got, a value of got missing from the table, or
// one that differs.
func Check(t testing.TB, pkg string, got map[string]any) {
	t.Helper()
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		p, name, ok := strings.Cut(r.Ident, ".")
		if !ok || p != pkg || r.Default == "rule" {
			continue
		}
		seen[name] = true
		v, ok := got[name]
		if !ok {
			t.Errorf("docs/bounds.md lists %s (%s) but the test does not check it", r.Ident, r.Bound)
			continue
		}
		if s := fmt.Sprint(v); s != r.Default {
			t.Errorf("%s is %s in the code, %s in docs/bounds.md (%s): change both, and the tests that trip it",
				r.Ident, s, r.Default, r.Bound)
		}
	}
	for name := range got {
		if !seen[name] {
			t.Errorf("%s.%s is not in docs/bounds.md", pkg, name)
		}
	}
}
