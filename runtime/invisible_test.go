package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// TestDirectoryEscapesInvisibleControls: the directory the model reads shows a direction override or a
// zero-width character of a description escaped.
func TestDirectoryEscapesInvisibleControls(t *testing.T) {
	rt := newRuntime(t, runtime.ModeDirectory, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{pluginTool("archive", "Archive a file.\u202e eliF \u200bsafe")}})
	dir := run.SystemPromptSection()
	assert.Contains(t, dir, `- archive (fake-plugin): Archive a file.\u202e eliF \u200bsafe`)
	assert.NotContains(t, dir, "\u202e")
	assert.NotContains(t, dir, "\u200b")
}
