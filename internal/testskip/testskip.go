// Package testskip is for tests that need a tool the machine may lack (node, npm, an installed package): Missing
// skips such a test, or fails it under CI=true, and Report tells the person who ran `go test ./...` which tests
// were skipped and why. go test shows a passing package's output only with -v, so a skip message alone is never
// seen, and a suite that quietly left out its tests against real servers would pass for a complete one.
//
// No program imports this package; the tests' TestMain call Report after the tests ran.
package testskip

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	mu      sync.Mutex
	skipped = map[string][]string{} // reason -> tests
)

// Missing skips tb because what is missing (what says what to install), or fails it when CI=true: CI installs
// every tool, and a test that dropped out there would hide a broken setup.
func Missing(tb testing.TB, what string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(what)
	}
	mu.Lock()
	skipped[what] = append(skipped[what], tb.Name())
	mu.Unlock()
	tb.Skip(what)
}

// Report writes the tests Missing skipped, grouped by reason, to the terminal when there is one (where go test
// cannot hide it) and to stderr (shown with -v, or when the package fails). It writes nothing when none was
// skipped.
func Report() {
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) == 0 {
		return
	}
	pkg := packageDir()
	var b strings.Builder
	reasons := make([]string, 0, len(skipped))
	for r := range skipped {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		tests := skipped[r]
		fmt.Fprintf(&b, "%s: skipped %d test(s) (%s): %s\n", pkg, len(tests), strings.Join(tests, ", "), r)
	}
	var out io.Writer = os.Stderr
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		out = io.MultiWriter(os.Stderr, tty)
	}
	_, _ = io.WriteString(out, b.String())
}

// packageDir is the directory go test runs the package in, relative to the module's root (where go.mod is).
func packageDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for root := dir; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			if rel, err := filepath.Rel(root, dir); err == nil {
				return filepath.ToSlash(rel)
			}
			return dir
		}
		if filepath.Dir(root) == root {
			return dir
		}
	}
}
