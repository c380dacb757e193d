package upstream

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a server wrote to stderr is quoted in errors from its tail, cut to whole characters at both ends.
func TestStderrTailKeepsWholeCharacters(t *testing.T) {
	tail := newStderrTail("srv", nil)
	tail.Write([]byte(strings.Repeat("é", stderrTailBytes) + "\n"))     // the 4 KiB tail starts inside no character
	tail.Write([]byte("fatal: " + strings.Repeat("ключ ", 100) + "\n")) // the last line is longer than 300 bytes
	line := tail.lastLine()
	assert.True(t, utf8.ValidString(line), line)
	assert.True(t, strings.HasPrefix(line, "fatal: ключ"))
	assert.True(t, strings.HasSuffix(line, "..."))
	assert.LessOrEqual(t, len(line), 300+len("..."))
	assert.True(t, utf8.Valid(tail.buf), "the kept tail starts on a character")
}

// A failed npm start ends with a line that says nothing of the failure; the lines before it say what it was.
func TestStderrTailQuotesTheLastLines(t *testing.T) {
	tail := newStderrTail("srv", nil)
	tail.Write([]byte("npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-memroy\n" +
		"npm error 404\nnpm error 404  The requested resource '@modelcontextprotocol/server-memroy@*' could not be found\n\n" +
		"npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log\n"))
	assert.Equal(t, "npm error code E404 | npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-memroy | "+
		"npm error 404 | npm error 404  The requested resource '@modelcontextprotocol/server-memroy@*' could not be found | "+
		"npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log", tail.lastLines(stderrQuoteLines))
	assert.Equal(t, "npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log", tail.lastLine())
}

// A missing working directory or program is named as such, not as exec reports it.
func TestCheckCommandNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/file"
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, tc := range []struct {
		cfg  ServerConfig
		want string
	}{
		{ServerConfig{Command: "sh", Cwd: dir + "/gone"}, `the working directory "` + dir + `/gone" (cwd) does not exist`},
		{ServerConfig{Command: "sh", Cwd: file}, `the working directory "` + file + `" (cwd) is not a directory`},
		{ServerConfig{Command: "no-such-program-here"}, `the program "no-such-program-here" (command) is not in PATH`},
		{ServerConfig{Command: dir + "/nope"}, `the program "` + dir + `/nope" (command) cannot be run`},
	} {
		err := checkCommand(tc.cfg)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), tc.want), err.Error())
	}
	assert.NoError(t, checkCommand(ServerConfig{Command: "sh", Cwd: dir}))
}
