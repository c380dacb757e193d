package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// nestingEnv marks the MCP servers toolsearch starts with its own pid. A toolsearch that finds it set was
// started as an MCP server by a toolsearch, and refuses to start MCP servers itself: a config that starts
// toolsearch inside itself (directly, through npx, a shell script, anything) would otherwise start it again and
// again without end. A config that chains toolsearch deliberately clears the marker in that server's "env".
const nestingEnv = "TOOLSEARCH_PARENT_PID"

// childEnv is what toolsearch adds to the environment of every MCP server it starts.
func childEnv() map[string]string {
	return map[string]string{nestingEnv: strconv.Itoa(os.Getpid())}
}

// checkNesting refuses to start MCP servers inside a toolsearch that a toolsearch started.
func checkNesting(getenv func(string) string) error {
	parent := getenv(nestingEnv)
	if parent == "" {
		return nil
	}
	// Short enough to survive as the last stderr line the parent quotes (300 bytes).
	return fmt.Errorf("refusing to start MCP servers: this toolsearch was started by toolsearch (pid %s) as an "+
		"MCP server, so the config starts toolsearch inside itself without end; remove that server (it runs "+
		"toolsearch directly or through a script) from the config", parent)
}

// skipSelfReferences drops the servers that would run this very binary as `mcp serve`, with a warning each.
func skipSelfReferences(w io.Writer, prefix string, cfg *upstream.Config) {
	for _, name := range selfReferences(cfg) {
		fmt.Fprintf(w, "%s: warning: skipping server %q: it is this toolsearch, which would start itself again and again\n", prefix, name)
		delete(cfg.Servers, name)
	}
}
