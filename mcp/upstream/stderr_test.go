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
	line := tail.reason()
	assert.True(t, utf8.ValidString(line), line)
	assert.True(t, strings.HasPrefix(line, "fatal: ключ"))
	assert.True(t, strings.HasSuffix(line, "..."))
	assert.LessOrEqual(t, len(line), 300+len("..."))
	assert.True(t, utf8.Valid(tail.buf), "the kept tail starts on a character")
}

// nodeModuleNotFound is what Node.js 20 writes when a package of a broken install is missing.
const nodeModuleNotFound = `node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
        ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /tmp/brk/index.js
    at packageResolve (node:internal/modules/esm/resolve:873:9)
    at moduleResolve (node:internal/modules/esm/resolve:946:18)
    at defaultResolve (node:internal/modules/esm/resolve:1188:11)
    at ModuleLoader.defaultResolve (node:internal/modules/esm/loader:708:12)
    at #cachedDefaultResolve (node:internal/modules/esm/loader:657:25)
    at ModuleLoader.resolve (node:internal/modules/esm/loader:640:38)
    at ModuleLoader.getModuleJobForImport (node:internal/modules/esm/loader:264:38)
    at ModuleJob._link (node:internal/modules/esm/module_job:168:49) {
  code: 'ERR_MODULE_NOT_FOUND'
}

Node.js v20.20.2
`

// A failed server's error quotes the line that says what is wrong, not the stack after it nor npm's pointer to
// its log; with no such line, the last lines that are not stack frames.
func TestStderrReasonIsTheErrorLine(t *testing.T) {
	for _, tc := range []struct{ name, stderr, want string }{
		{"node", nodeModuleNotFound, "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /tmp/brk/index.js"},
		{"npm", "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-memroy\n" +
			"npm error 404\nnpm error 404  The requested resource '@modelcontextprotocol/server-memroy@*' could not be found\n\n" +
			"npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log\n",
			"npm error code E404 | npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-memroy | " +
				"npm error 404 | npm error 404  The requested resource '@modelcontextprotocol/server-memroy@*' could not be found"},
		{"python", "Traceback (most recent call last):\n  File \"/srv/main.py\", line 1, in <module>\n    import httpx\n" +
			"ModuleNotFoundError: No module named 'httpx'\n", "ModuleNotFoundError: No module named 'httpx'"},
		{"go", "starting\npanic: the database went away\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:9 +0x1d\nexit status 2\n",
			"panic: the database went away"},
		{"an error logged, then the reason", "Error: retrying the cache\nloaded 3 plugins\nError: EACCES: permission denied, open '/data/x'\n    at open (fs.js:1:1)\n",
			"Error: EACCES: permission denied, open '/data/x'"},
		{"no error line", "Starting server\nlistening on stdio\nbye\n    at somewhere (x.js:1:1)\n", "Starting server | listening on stdio | bye"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tail := newStderrTail("srv", nil)
			tail.Write([]byte(tc.stderr))
			assert.Equal(t, tc.want, tail.reason())
		})
	}
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
