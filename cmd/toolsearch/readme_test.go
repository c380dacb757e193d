package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/config"
)

const readmePath = "../../README.md"

// TestREADMECommands runs every toolsearch command of the README's shell blocks from the repository root, except
// those that say they need the network; each must succeed. The config commands edit a copy of the example
// config ($TOOLSEARCH_CONFIG), never the file in the repository.
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	example, err := os.ReadFile("../../examples/config.json5")
	require.NoError(t, err)
	scratch := filepath.Join(t.TempDir(), "config.json5")
	require.NoError(t, os.WriteFile(scratch, example, 0o600))
	t.Setenv(config.PathEnv, scratch)
	t.Chdir("../..")

	ran := 0
	for _, line := range shellLines(string(data)) {
		cmd, comment, _ := strings.Cut(line, " # ")
		args := shellWords(t, cmd)
		switch {
		case len(args) == 0:
			continue
		case strings.Contains(comment, "network"), args[0] == "go" && args[1] == "install":
			continue // needs the network: the module proxy, npx
		case args[0] == "go" && args[1] == "test":
			continue // this is it
		case args[0] == "go" && args[1] == "run" && args[2] == "./cmd/toolsearch":
			args = append([]string{"toolsearch"}, args[3:]...)
		case args[0] != "toolsearch":
			continue // npm ci runs in .ci/run
		}
		if args[1] == "demo" {
			continue // TestDemo runs it
		}
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", args[1:]...)
			assert.Equal(t, exitOK, code, "%s\nstdout: %s\nstderr: %s", cmd, stdout, stderr)
		})
		ran++
	}
	assert.GreaterOrEqual(t, ran, 10, "the README's commands were found")
}

// shellLines returns the lines of the README's ```sh blocks.
func shellLines(readme string) []string {
	var lines []string
	in := false
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in:
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return lines
}

// shellWords splits a command line as a POSIX shell would for the quoting the README uses: '...' and "...".
func shellWords(t *testing.T, line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			require.GreaterOrEqual(t, end, 0, "unbalanced quote in %q", line)
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestREADMEListsEveryCommand keeps the README's command list complete: every command the CLI offers has an
// example line there.
func TestREADMEListsEveryCommand(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, line := range shellLines(string(data)) {
		if words := strings.Fields(line); len(words) > 1 && words[0] == "toolsearch" {
			listed[words[1]] = true
		}
	}
	for name := range commands() {
		assert.True(t, listed[name], "the README has no example of `toolsearch %s`", name)
	}
}
