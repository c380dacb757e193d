package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// codeMaxOutputBytes and codeMaxCalls reach the sandbox: a script within the defaults trips the configured ones,
// and the error names the setting.
func TestCodeModeOutputAndCallLimitsAreTheConfigured(t *testing.T) {
	// 2 KiB of console: far below the 64 KiB default.
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeMaxOutputBytes: 2 << 10}})
	run := startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	_, cr := runCode(t, run, "c", `for (let i = 0; i < 10; i++) console.log('x'.repeat(300)); return 1`)
	require.NotNil(t, cr.Error, "3 KiB of console passes the default, not 2 KiB")
	assert.Equal(t, "output", cr.Error.Kind)
	assert.Contains(t, cr.Error.Message, "2048")
	assert.Contains(t, cr.Error.Message, "tools.toolSearch.codeMaxOutputBytes")

	rt = newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeMaxCalls: 3}})
	run = startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	_, cr = runCode(t, run, "c", `for (let i = 0; i < 5; i++) await openclaw.tools.search('file ' + i); return 1`)
	require.NotNil(t, cr.Error, "five calls pass the default of 100, not 3")
	assert.Equal(t, "calls", cr.Error.Kind)
	assert.Contains(t, cr.Error.Message, "tools.toolSearch.codeMaxCalls")
}
