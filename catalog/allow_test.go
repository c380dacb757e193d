package catalog

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// An empty allow list, as a config reader produces it for "allow: []", restricts nothing, at every layer: to
// allow nothing, deny "*".
func TestEmptyAllowListAllowsEverything(t *testing.T) {
	tool := &Tool{Source: SourceMCP, SourceName: "fs", Name: "read_file"}
	for _, p := range []*Policy{
		{Agent: Rule{Allow: []string{}}},
		{Profile: Rule{Allow: []string{}}},
		{Session: Rule{Allow: []string{}, Deny: []string{}}},
	} {
		assert.True(t, p.Allows(tool))
		assert.True(t, p.Check(tool).Allowed)
	}
	assert.False(t, (&Policy{Agent: Rule{Allow: []string{}, Deny: []string{"*"}}}).Allows(tool))
}
