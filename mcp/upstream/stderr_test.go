package upstream

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
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
