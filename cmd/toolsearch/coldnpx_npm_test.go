//go:build npm

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/npmpins"
)

// This file is built with -tags npm (.ci/run runs it): it installs real packages from the npm registry.

// pinnedNPMServers reads the pinned servers, "{dir}" in their args and env replaced by dir.
func pinnedNPMServers(t *testing.T, dir string) []npmpins.Server {
	t.Helper()
	servers, err := npmpins.Read(filepath.Join("..", "..", "mcp", "testdata", "npm"), dir)
	require.NoError(t, err)
	return servers
}

// TestColdNpxFirstScriptAtConnectCallsEachServer is the newcomer's first contact with eight real `npx -y`
// servers that npm has never fetched (a private empty cache): the official TypeScript SDK client starts
// `toolsearch mcp serve` and, the moment initialize is answered, sends one tool_search_code script that searches
// for a tool of each server and calls it. Each search uses words that only its server's tools have, so an answer
// without that server would be incomplete: the front waits for it (reporting progress, which the client resets
// its request timeout on) instead of answering "still starting", and the first script gets all eight results.
func TestColdNpxFirstScriptAtConnectCallsEachServer(t *testing.T) {
	node, script := requireTSClient(t)
	npx, err := exec.LookPath("npx")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npx is not installed")
		}
		t.Skip("npx is not installed (apt-get install npm)")
	}
	work := t.TempDir()
	servers := pinnedNPMServers(t, work)
	require.Len(t, servers, 8, "the issue's scenario: eight servers at once")
	cache := t.TempDir()

	type want struct {
		Server    string          `json:"server"`
		Query     string          `json:"query"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var wants []want
	var entries strings.Builder
	for _, s := range servers {
		env := map[string]string{"npm_config_cache": cache, "npm_config_update_notifier": "false"}
		for k, v := range s.Env {
			env[k] = v
		}
		server, err := json.Marshal(map[string]any{"command": npx, "args": append([]string{"-y", s.Pkg}, s.Args...), "env": env})
		require.NoError(t, err)
		fmt.Fprintf(&entries, "\n    %q: %s,", s.Name, server)
		wants = append(wants, want{Server: s.Name, Query: s.Query, Tool: s.Tool, Arguments: s.Arguments})
	}
	cfg := writeFile(t, "config.json", fmt.Sprintf("{\n  mcpServers: {%s\n  },\n  tools: {toolSearch: {mode: \"code\"}},\n}", entries.String()))
	wantJSON, err := json.Marshal(wants)
	require.NoError(t, err)
	code := `
const wants = ` + string(wantJSON) + `;
const lines = await Promise.all(wants.map(async (w) => {
  const id = "mcp:" + w.server + ":" + w.tool;
  const hits = await openclaw.tools.search(w.query, {limit: 10});
  if (!hits.some((h) => h.id === id)) return w.server + " not-found " + JSON.stringify(hits.map((h) => h.id));
  try {
    const r = await openclaw.tools.call(id, w.arguments);
    return w.server + " called " + id + " " + r.result.content.map((c) => c.text).join(" ").replace(/\s+/g, " ").slice(0, 300);
  } catch (e) {
    return w.server + " failed " + String(e);
  }
}));
return lines;`

	bin := toolsearchBinary(t)
	began := time.Now()
	// The client resets its request timeout on each progress notification, so the front may wait longer than the
	// SDK's 60 s: --start-wait gives it the room (eight cold installs took 30-37 s on the idle 2-core machine and
	// minutes on a loaded one).
	res, err := tsCallWithin(t.Context(), 12*time.Minute, node, script, map[string]any{"command": bin,
		"args": []string{"mcp", "serve", "--config", cfg, "--start-wait", "10m"}, "resetTimeoutOnProgress": true,
		"calls": []map[string]any{{"name": "tool_search_code", "arguments": map[string]any{"code": code}}}})
	require.NoError(t, err)
	require.Len(t, res.Results, 1)
	r := res.Results[0]
	t.Logf("connected in %d ms; the first script, sent %d ms after initialize, answered in %d ms after %d progress "+
		"notifications (%s in all):\n%s", res.InitializeMs, r.SentAfterInitializeMs, r.TookMs, r.Progress,
		time.Since(began).Round(time.Second), r.Text)
	require.Empty(t, r.Error, "the script's request itself did not fail (timeout, transport)")
	assert.Positive(t, r.Progress, "the script waited for cold installs, and the wait reported progress")
	require.False(t, r.IsError, r.Text)
	var out struct {
		OK    bool     `json:"ok"`
		Value []string `json:"value"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Text), &out), r.Text)
	require.True(t, out.OK, r.Text)
	require.Len(t, out.Value, len(servers), r.Text)
	for i, s := range servers {
		id := "mcp:" + s.Name + ":" + s.Tool
		assert.Regexp(t, "^"+regexp.QuoteMeta(s.Name+" called "+id+" ")+".*"+regexp.QuoteMeta(s.Expect),
			out.Value[i], "the first script found and called %s (%s)", id, s.Pkg)
	}
}
