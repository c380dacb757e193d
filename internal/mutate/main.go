// Command mutate checks that the tests catch a change of every bound and rule: it applies each one-line
// mutation of a list to the source, in place, runs the tests the list names for it, puts the line back, and
// reports the mutations no test caught (survivors). Run it from the module root:
//
//	go run ./internal/mutate [-list internal/mutate/mutations.txt] [-only SUBSTRING]
//
// Each line of the list is five fields separated by tabs: the file (with "@N" to pick the Nth of several equal
// lines), the line as it is (compared without leading and trailing white space; it must be there exactly once,
// or N times with @N), the line to put instead (indented as the original), the package, and the -run pattern of
// the tests to run. Lines starting with "#" and blank lines are skipped.
//
// The file is restored whatever happens: after each run, on an interrupt, and, if the command was killed, at the
// start of the next run, from the copy it keeps beside the file while the mutation is applied (FILE.mutate-orig).
// It exits 1 when a mutation survives, 2 when the list is wrong (a line not found, a mutation that does not
// build) or a test run could not be made.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const backupSuffix = ".mutate-orig"

type mutation struct {
	line           int // in the list
	file           string
	nth            int // 1-based occurrence of old in file
	old, new       string
	pkg, run       string
	outcome, notes string
}

func main() {
	os.Exit(mainErr(os.Stdout, os.Stderr, os.Args[1:]))
}

func mainErr(stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	list := fs.String("list", filepath.Join("internal", "mutate", "mutations.txt"), "the list of mutations")
	only := fs.String("only", "", "run only the mutations whose line contains this text")
	timeout := fs.Duration("timeout", 20*time.Minute, "bound on each test run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := restoreLeftovers("."); err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 2
	}
	ms, err := readList(*list)
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	survivors, broken := 0, 0
	for i := range ms {
		m := &ms[i]
		if *only != "" && !strings.Contains(m.file+"\t"+m.old+"\t"+m.new+"\t"+m.run, *only) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		began := time.Now()
		err := apply(ctx, m, *timeout)
		switch {
		case err != nil:
			m.outcome, m.notes = "ERROR", err.Error()
			broken++
		case m.outcome == "SURVIVED":
			survivors++
		}
		fmt.Fprintf(stdout, "%-8s %s (list line %d): %q -> %q  [%s -run %s] %s%s\n", m.outcome, m.file, m.line, m.old, m.new,
			m.pkg, m.run, time.Since(began).Round(time.Second), noteOf(m.notes))
	}
	fmt.Fprintf(stdout, "mutate: %d survivor(s), %d error(s)\n", survivors, broken)
	switch {
	case broken > 0 || ctx.Err() != nil:
		return 2
	case survivors > 0:
		return 1
	}
	return 0
}

func noteOf(s string) string {
	if s == "" {
		return ""
	}
	return "\n         " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n         ")
}

func readList(path string) ([]mutation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mutation
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != 5 {
			return nil, fmt.Errorf("%s:%d: want 5 tab-separated fields (file, old, new, package, tests), got %d", path, n, len(fields))
		}
		m := mutation{line: n, file: fields[0], nth: 1, old: strings.TrimSpace(fields[1]), new: strings.TrimSpace(fields[2]),
			pkg: fields[3], run: fields[4]}
		if file, nth, ok := strings.Cut(m.file, "@"); ok {
			k, err := strconv.Atoi(nth)
			if err != nil || k < 1 {
				return nil, fmt.Errorf("%s:%d: %q: the occurrence after @ must be a positive number", path, n, m.file)
			}
			m.file, m.nth = file, k
		}
		if m.old == m.new {
			return nil, fmt.Errorf("%s:%d: the mutation changes nothing", path, n)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// apply mutates m's line, runs its tests and restores the file; m.outcome says whether the tests caught it.
func apply(ctx context.Context, m *mutation, timeout time.Duration) (err error) {
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(orig), "\n")
	var at []int
	for i, l := range lines {
		if strings.TrimSpace(l) == m.old {
			at = append(at, i)
		}
	}
	if len(at) < m.nth || (m.nth == 1 && len(at) != 1) {
		return fmt.Errorf("the line is in %s %d time(s): the list is stale (or needs @N)", m.file, len(at))
	}
	i := at[m.nth-1]
	indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
	lines[i] = indent + m.new + "\n"
	backup := m.file + backupSuffix
	if err := os.WriteFile(backup, orig, 0o600); err != nil {
		return err
	}
	defer func() {
		if rerr := os.WriteFile(m.file, orig, 0o644); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restoring %s (its copy is %s): %w", m.file, backup, rerr))
			return
		}
		_ = os.Remove(backup)
	}()
	if err := os.WriteFile(m.file, []byte(strings.Join(lines, "")), 0o644); err != nil {
		return err
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "go", "test", "-count=1", "-timeout", timeout.String(), "-run", m.run, "./"+m.pkg)
	setGroup(cmd)
	out, runErr := cmd.CombinedOutput()
	text := string(out)
	switch {
	case strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]"):
		return fmt.Errorf("the mutation does not build:\n%s", tail(text, 15))
	case strings.Contains(text, "no tests to run"):
		return fmt.Errorf("-run %s runs no test of %s", m.run, m.pkg)
	case ctx.Err() != nil:
		return ctx.Err()
	case runErr == nil:
		m.outcome = "SURVIVED"
	default:
		var exit *exec.ExitError
		if !errors.As(runErr, &exit) {
			return runErr
		}
		m.outcome, m.notes = "caught", failedTests(text)
	}
	return nil
}

// failedTests names the tests that failed, from go test's output.
func failedTests(out string) string {
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "---" && f[1] == "FAIL:" {
			names = append(names, f[2])
		}
	}
	if len(names) == 0 {
		return "by: " + tail(out, 3)
	}
	return "by: " + strings.Join(names, ", ")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// restoreLeftovers puts back every file a killed run left mutated, from its copy.
func restoreLeftovers(root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, backupSuffix) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		target := strings.TrimSuffix(path, backupSuffix)
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "mutate: restored %s, which a run that was killed left mutated\n", target)
		return os.Remove(path)
	})
}
