package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// TestRealServersThroughCodeMode starts three MCP servers that no one here wrote, lists their tools into one
// catalog, and has a tool_search_code script search for and call one tool of each, in parallel.
func TestRealServersThroughCodeMode(t *testing.T) {
	node, dir := requireNPMServers(t)
	workdir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(workdir, "notes.txt"), []byte("remember the milk\n"), 0o600))
	state := t.TempDir() // server-memory writes its graph here, not into node_modules
	cfg := &Config{Servers: map[string]ServerConfig{
		"everything": {Command: node, Args: []string{filepath.Join(dir, "server-everything/dist/index.js"), "stdio"}},
		"memory": {Command: node, Args: []string{filepath.Join(dir, "server-memory/dist/index.js")},
			Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(state, "memory.jsonl")}},
		"filesystem": {Command: node, Args: []string{filepath.Join(dir, "server-filesystem/dist/index.js"), workdir}},
	}}
	progress := &syncBuffer{}
	began := time.Now()
	src, err := New(t.Context(), cfg, &Options{Progress: progress, StartTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() {
		closing := time.Now()
		require.NoError(t, src.Close(context.Background()))
		t.Logf("closed the three servers in %s", time.Since(closing).Round(time.Millisecond))
	})
	t.Logf("started in %s (in parallel):\n%s", time.Since(began).Round(time.Millisecond), progress.String())
	total := 0
	for _, st := range src.Status() {
		require.Equal(t, StateReady, st.State, "%s: %v", st.Name, st.Err)
		require.Positive(t, st.Tools, st.Name)
		total += st.Tools
	}

	rt := newTestRuntime(t, runtime.ModeCode)
	run, err := rt.StartRun(t.Context(), runtime.RunRequest{SessionID: t.Name(), Tools: src.Tools()})
	require.NoError(t, err)
	defer run.Close()
	require.Equal(t, []string{runtime.ToolSearchCodeName}, toolDefNames(run.Tools()), "one compact tool instead of every schema")

	code := `
const find = async (query, server) => {
  const hits = await openclaw.tools.search(query, {limit: 5});
  const hit = hits.find(h => h.id.startsWith("mcp:" + server + ":"));
  if (!hit) throw new Error("no " + server + " tool for " + query + ": " + JSON.stringify(hits.map(h => h.id)));
  return hit;
};
const [fs, mem, ev] = await Promise.all([
  find("list files in a directory", "filesystem"),
  find("create entities in the knowledge graph", "memory"),
  find("echo a message back", "everything"),
]);
const [listing, created, echoed] = await Promise.all([
  openclaw.tools.call(fs.id, {path: DIR}),
  openclaw.tools.call(mem.id, {entities: [{name: "toolsearch", entityType: "project", observations: ["written in Go"]}]}),
  openclaw.tools.call(ev.id, {message: "hello from code mode"}),
]);
const text = r => r.result.content.map(c => c.text).join("\n");
return {ids: [fs.id, mem.id, ev.id], listing: text(listing), created: text(created), echoed: text(echoed)};`
	dirJSON, _ := json.Marshal(workdir)
	code = strings.Replace(code, "DIR", string(dirJSON), 1)
	args, _ := json.Marshal(map[string]string{"code": code})
	res, err := run.Execute(t.Context(), runtime.ToolCall{ID: "call-1", Name: runtime.ToolSearchCodeName, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)

	var out struct {
		OK    bool `json:"ok"`
		Value struct {
			IDs                      []string
			Listing, Created, Echoed string
		} `json:"value"`
		Telemetry runtime.CodeTelemetry `json:"telemetry"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &out), res.Content)
	require.True(t, out.OK, res.Content)
	assert.Equal(t, []string{"mcp:filesystem:list_directory", "mcp:memory:create_entities", "mcp:everything:echo"}, out.Value.IDs)
	assert.Contains(t, out.Value.Listing, "[FILE] notes.txt")
	assert.Contains(t, out.Value.Created, `"name": "toolsearch"`)
	assert.Contains(t, out.Value.Echoed, "hello from code mode")
	assert.Equal(t, total, out.Telemetry.CatalogSize)
	assert.Equal(t, runtime.SourceCounts{MCP: total}, out.Telemetry.Sources)
	assert.EqualValues(t, 3, out.Telemetry.CallCount)

	// The hidden calls are recorded with their MCP source, for the session log.
	require.Len(t, res.Hidden, 3)
	for _, h := range res.Hidden {
		assert.Equal(t, "mcp", string(h.Source))
		assert.False(t, h.Result.IsError, h.Result.Content)
	}
	saved, err := os.ReadFile(filepath.Join(state, "memory.jsonl"))
	require.NoError(t, err, "the memory server really ran the call")
	assert.Contains(t, string(saved), "toolsearch")
}

func toolDefNames(defs []runtime.ToolDefinition) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Function.Name)
	}
	return out
}

// TestRealStreamableHTTPServer connects to server-everything over streamable HTTP (a "url" server).
func TestRealStreamableHTTPServer(t *testing.T) {
	node, dir := requireNPMServers(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	cmd := exec.Command(node, filepath.Join(dir, "server-everything/dist/index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				close(listening)
				break
			}
		}
		for sc.Scan() { // keep draining so the server never blocks on stderr
		}
	}()
	select {
	case <-listening:
	case <-time.After(time.Minute):
		t.Fatal("server-everything did not start listening")
	}

	src, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{
		"everything": {URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"},
	}}, &Options{StartTimeout: time.Minute})
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close(context.Background())) }()
	require.Equal(t, StateReady, src.Status()[0].State, "%v", src.Status()[0].Err)

	res, err := call(t, src, "get-sum", `{"a":2,"b":40}`)
	require.NoError(t, err)
	assert.False(t, res.isError)
	assert.Contains(t, res.text, "42")
}
