// Package mcptest holds what the tests of mcp/upstream and mcp/front share: an in-process MCP server that can
// hang or crash on demand, a hand-written JSON-RPC server for what no SDK would send, a progress writer they can
// read while a Source writes, the real npm servers of mcp/testdata/npm, and the processes children leave
// behind. It is imported by test files only.
package mcptest

import (
	"github.com/toolsearch/toolsearch/internal/testskip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// SyncBuffer is a progress writer tests can read while the Source writes.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NPMServers is the folder, under mcp/testdata/npm, where .ci/run installs the pinned real servers (npm ci).
func NPMServers() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "npm", "node_modules", "@modelcontextprotocol")
}

// RequireNPMServers skips unless node and the installed servers are there; under CI it fails instead, since
// .ci/run installs them and a skip would hide a broken install step.
func RequireNPMServers(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(what string) {
		testskip.Missing(t, what+"; to run the tests against real MCP servers: cd mcp/testdata/npm && npm ci")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	dir = NPMServers()
	for _, s := range []string{"everything", "memory", "filesystem"} {
		if _, err := os.Stat(filepath.Join(dir, "server-"+s, "dist", "index.js")); err != nil {
			missing("@modelcontextprotocol/server-" + s + " is not installed under " + dir)
		}
	}
	return node, dir
}

// Pids reads the "<what> N" lines ("pid N", "grandchild N") children write to stderr, as ServerStderr prefixes
// them ("[name] pid N").
func Pids(stderr string, what string) []int {
	var out []int
	for _, m := range regexp.MustCompile(`(?m)\] `+what+` (\d+)$`).FindAllStringSubmatch(stderr, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// Alive reports whether a process exists and is not a zombie (an orphan whose reaper is slow still counts as
// gone: it can do nothing).
func Alive(t *testing.T, pid int) bool {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// RequireProc skips a test that needs /proc to see whether processes are gone.
func RequireProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see whether processes are gone")
	}
}
