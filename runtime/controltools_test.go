package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The code tool's definition goes out with every request of code mode: what it says about TypeScript, the script
// forms and failed tools had to fit in the bytes it took before.
func TestCodeToolDescriptionBudget(t *testing.T) {
	assert.LessOrEqual(t, len(searchCodeDescription)+len(searchCodeParameters), codeToolBytes)
	for _, s := range []string{"TS", "last expression", "one function", "result.isError"} {
		assert.Contains(t, searchCodeDescription, s)
	}
}
