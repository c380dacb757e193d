package main

import (
	"bytes"
	"context"
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

	"github.com/toolsearch/toolsearch/gateway/mockprovider"
)

// goBlocks returns the ```go blocks of the README, in order.
func goBlocks(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)\n```go\n(.*?)\n```\n").FindAllStringSubmatch(string(data), -1) {
		blocks = append(blocks, m[1]+"\n")
	}
	return blocks
}

// buildProgram builds src as a main package of this module (a directory under testdata, which the go tool's
// patterns skip, so a failed run leaves nothing that ./... would build) and returns the binary's path.
func buildProgram(t *testing.T, src string) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "readme-program-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600))
	bin := filepath.Join(t.TempDir(), "program")
	cmd := exec.Command("go", "build", "-o", bin, "./"+filepath.ToSlash(dir))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "a Go program of README.md does not build:\n%s\n%s", out, src)
	return bin
}

// TestREADMEPrograms builds every Go program of the README against this module, so that the README cannot
// drift from the API again, and runs each: one with an "// Output:" comment must print exactly that, and the
// library program runs against a fake MCP server (this test binary playing a mail server) and a scripted model
// that calls the server's tool through code mode.
func TestREADMEPrograms(t *testing.T) {
	blocks := goBlocks(t)
	require.Len(t, blocks, 2, "the README's Go programs: the gateway one and the library one")
	ran := 0
	for i, src := range blocks {
		require.True(t, strings.HasPrefix(src, "package main\n"), "Go block %d of README.md is not a whole program", i)
		bin := buildProgram(t, src)
		_, want, hasOutput := strings.Cut(src, "\t// Output:\n")
		switch {
		case hasOutput:
			want, _, _ = strings.Cut(want, "\n}\n")
			var lines []string
			for _, l := range strings.Split(want, "\n") {
				lines = append(lines, strings.TrimPrefix(strings.TrimSpace(l), "// "))
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			out, err := exec.CommandContext(ctx, bin).Output()
			cancel()
			require.NoError(t, err)
			assert.Equal(t, strings.Join(lines, "\n")+"\n", string(out), "README program %d", i)
			ran++
		case strings.Contains(src, "config.Load("):
			runLibraryProgram(t, bin)
			ran++
		}
	}
	assert.Equal(t, 2, ran, "every README program ran")
}

// runLibraryProgram runs the README's library program on a config file whose one server is this test binary
// playing a mail server, with a scripted model behind OPENAI_BASE_URL that calls mcp:mail:send_email.
func runLibraryProgram(t *testing.T, bin string) {
	provider := mockprovider.NewCaller("mcp:mail:send_email", &mockprovider.Options{
		Arguments: json.RawMessage(`{"title": "hello"}`)})
	defer provider.Close()
	path := writeFile(t, "config.json5", fmt.Sprintf(`{
  mcpServers: {
    mail: {command: %q, args: ["-test.run=^$"], env: {%s: "mail"}},
  },
  tools: {deny: ["mcp:mail:nothing_*"]},
}`, os.Args[0], upstreamEnv))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, path, "Email me hello.")
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+provider.URL(), "OPENAI_API_KEY=test", "TOOLSEARCH_MODEL=mock-model")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Contains(t, stdout.String(), "called: mcp:mail:send_email via code\n")
	assert.Contains(t, stdout.String(), `sent: hello`, "the model read the MCP server's result")
	require.NotEmpty(t, provider.Requests())
	assert.Equal(t, []string{"tool_search_code"}, provider.Requests()[0].Tools, "the file sets no mode: code mode, as mcp serve")
}
