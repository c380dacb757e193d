package catalog

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr(b bool) *bool { return &b }

// The tools every annotation test uses: what each claims, and whether its claims may be believed.
func annotatedTools() (readOnly, destructive, bare, liar, vouched *Tool) {
	readOnly = &Tool{Source: SourceOpenClaw, SourceName: "core", Name: "read_file",
		Annotations: &Annotations{ReadOnlyHint: ptr(true)}}
	destructive = &Tool{Source: SourceOpenClaw, SourceName: "core", Name: "delete_file",
		Annotations: &Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true)}}
	bare = &Tool{Source: SourceOpenClaw, SourceName: "core", Name: "write_note"}
	// An untrusted server claiming everything that would loosen a policy.
	liar = &Tool{Source: SourceMCP, SourceName: "shady", Name: "wipe_disk",
		Annotations: &Annotations{ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)}}
	// The same claims from a server the user marked trusted.
	vouched = &Tool{Source: SourceMCP, SourceName: "docs", Name: "search_docs", TrustedByUser: true,
		Annotations: &Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)}}
	return
}

func TestBehavior(t *testing.T) {
	readOnly, destructive, bare, liar, vouched := annotatedTools()
	assert.Equal(t, Behavior{ReadOnly: true, OpenWorld: true}, readOnly.Behavior())
	assert.Equal(t, Behavior{Destructive: true, OpenWorld: true}, destructive.Behavior())
	assert.Equal(t, Behavior{Destructive: true, OpenWorld: true}, bare.Behavior(), "unset hints take the MCP defaults")
	assert.Equal(t, Behavior{Destructive: true, OpenWorld: true}, liar.Behavior(), "an untrusted claim never loosens")
	assert.Equal(t, Behavior{ReadOnly: true}, vouched.Behavior(), "a server the user trusts is believed")
	idem := &Tool{Source: SourceOpenClaw, SourceName: "core", Name: "put",
		Annotations: &Annotations{DestructiveHint: ptr(false), IdempotentHint: ptr(true)}}
	assert.Equal(t, Behavior{Idempotent: true, OpenWorld: true}, idem.Behavior())
}

func TestPolicyAnnotations(t *testing.T) {
	readOnly, destructive, bare, liar, vouched := annotatedTools()
	all := []*Tool{readOnly, destructive, bare, liar, vouched}
	tests := []struct {
		name   string
		policy *Policy
		allows []bool // readOnly, destructive, bare, liar, vouched
		asks   []bool
	}{
		{"read-only session", &Policy{Session: Rule{Allow: []string{"annotation:readOnly"}}},
			[]bool{true, false, false, false, true}, []bool{false, false, false, false, false}},
		{"the MCP spelling and any case", &Policy{Session: Rule{Allow: []string{"Annotation:READONLYHINT"}}},
			[]bool{true, false, false, false, true}, []bool{false, false, false, false, false}},
		{"deny destructive", &Policy{Agent: Rule{Deny: []string{"annotation:destructive"}}},
			[]bool{true, false, false, false, true}, []bool{false, false, false, false, false}},
		{"ask for destructive", &Policy{Agent: Rule{Ask: []string{"annotation:destructive"}}},
			[]bool{true, true, true, true, true}, []bool{false, true, true, true, false}},
		{"ask for open-world tools in one layer, by name in another", &Policy{
			Profile: Rule{Ask: []string{"annotation:openWorld"}}, Session: Rule{Ask: []string{"search_docs"}}},
			[]bool{true, true, true, true, true}, []bool{true, true, true, true, true}},
		{"ask does not filter", &Policy{Agent: Rule{Ask: []string{"*"}}},
			[]bool{true, true, true, true, true}, []bool{true, true, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.policy.Validate())
			for i, tool := range all {
				assert.Equal(t, tt.allows[i], tt.policy.Allows(tool), "allows %s", tool.ID())
				_, asks := tt.policy.NeedsApproval(tool)
				assert.Equal(t, tt.asks[i], asks, "asks %s", tool.ID())
			}
		})
	}
	entry, ok := (&Policy{Sandbox: Rule{Ask: []string{" annotation:destructive "}}}).NeedsApproval(liar)
	assert.True(t, ok)
	assert.Equal(t, "annotation:destructive", entry, "the entry that asked, for the message")
	_, ok = (*Policy)(nil).NeedsApproval(liar)
	assert.False(t, ok)
}

// A misspelt annotation would match nothing: in a Deny or Ask list that lets through what it was meant to stop.
func TestPolicyValidate(t *testing.T) {
	assert.NoError(t, (*Policy)(nil).Validate())
	assert.NoError(t, (&Policy{Agent: Rule{Deny: []string{"annotation:destructiveHint", "group:web", "*"}}}).Validate())
	err := (&Policy{Agent: Rule{Deny: []string{"annotation:destrutive"}}, Session: Rule{Ask: []string{"annotation:"}}}).Validate()
	require.ErrorIs(t, err, ErrInvalidPolicy)
	assert.Equal(t, `catalog: invalid policy: unknown annotation in "annotation:destrutive", "annotation:" (known: `+
		`annotation:readOnly, annotation:destructive, annotation:idempotent, annotation:openWorld)`, err.Error())

	// Used anyway, such an entry fails closed.
	readOnly, _, _, _, _ := annotatedTools()
	assert.False(t, (&Policy{Agent: Rule{Deny: []string{"annotation:readOnyl"}}}).Allows(readOnly), "a misspelt deny denies")
	assert.False(t, (&Policy{Agent: Rule{Allow: []string{"annotation:readOnyl"}}}).Allows(readOnly), "a misspelt allow allows nothing")
	_, asks := (&Policy{Agent: Rule{Ask: []string{"annotation:destrutive"}}}).NeedsApproval(readOnly)
	assert.True(t, asks, "a misspelt ask asks")
}

// Annotations, trust and Ask entries are part of what a cached catalog is reused for.
func TestFingerprintAnnotations(t *testing.T) {
	base := func() []Tool {
		_, _, bare, _, _ := annotatedTools()
		return []Tool{*bare}
	}
	fp := func(tools []Tool, p *Policy) string { return fingerprintOf(tools, &Options{Policy: p}) }
	ref := fp(base(), nil)
	changed := base()
	changed[0].Annotations = &Annotations{ReadOnlyHint: ptr(true)}
	assert.NotEqual(t, ref, fp(changed, nil))
	other := base()
	other[0].Annotations = &Annotations{ReadOnlyHint: ptr(false)}
	assert.NotEqual(t, fp(changed, nil), fp(other, nil), "set to false is not set to true")
	trusted := base()
	trusted[0].TrustedByUser = true
	assert.NotEqual(t, ref, fp(trusted, nil))
	assert.NotEqual(t, ref, fp(base(), &Policy{Agent: Rule{Ask: []string{"*"}}}))
	assert.Equal(t, ref, fp(base(), nil))
}

// The catalog keeps its own copy: changing the caller's annotations afterwards changes nothing.
func TestAnnotationsAreCopied(t *testing.T) {
	readOnly, _, _, _, _ := annotatedTools()
	c, err := New([]Tool{*readOnly}, nil)
	require.NoError(t, err)
	*readOnly.Annotations.ReadOnlyHint = false
	got, err := c.Lookup("read_file")
	require.NoError(t, err)
	assert.True(t, *got.Annotations.ReadOnlyHint)
}

// A trusted MCP server's schemas are rendered into hints; an untrusted one's never are.
func TestTrustedByUserHints(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	out := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
	c, err := New([]Tool{
		{Source: SourceMCP, SourceName: "docs", Name: "search_docs", Parameters: schema, OutputSchema: out, TrustedByUser: true},
		{Source: SourceMCP, SourceName: "web", Name: "search_web", Parameters: schema, OutputSchema: out},
	}, nil)
	require.NoError(t, err)
	d, err := c.Describe("search_docs")
	require.NoError(t, err)
	assert.Equal(t, "{ q: string }", d.Input)
	assert.Equal(t, "{ n: number }", d.Output)
	d, err = c.Describe("search_web")
	require.NoError(t, err)
	assert.Equal(t, "unknown", d.Input)
	assert.Empty(t, d.Output)
}

func TestFileAnnotations(t *testing.T) {
	tools, err := ParseFile([]byte(`[{"name":"rm","server":"fs","annotations":{"destructiveHint":true,"readOnlyHint":false}}]`))
	require.NoError(t, err)
	require.NotNil(t, tools[0].Annotations)
	assert.True(t, *tools[0].Annotations.DestructiveHint)
	assert.False(t, *tools[0].Annotations.ReadOnlyHint)
	assert.Nil(t, tools[0].Annotations.IdempotentHint)
}
