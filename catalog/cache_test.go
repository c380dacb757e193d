package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheReuse(t *testing.T) {
	cache := NewCache(nil)
	tools := sampleTools()
	c1, reused, err := cache.Get("run-1", tools, nil)
	require.NoError(t, err)
	assert.False(t, reused)
	_, err = c1.Search(context.Background(), "web", 0)
	require.NoError(t, err)

	c2, reused, err := cache.Get("run-1", sampleTools(), nil)
	require.NoError(t, err)
	assert.True(t, reused, "an unchanged tool set is reused, not rebuilt")
	assert.Same(t, c1, c2)
	assert.Equal(t, int64(1), c2.Stats().Searches)
}

// TestCacheConcurrentGetsOfOneScope hammers one scope with two tool sets at once, as an MCP front does when a
// client's call starts a run while an upstream change rebuilds the shared catalog. Under -race it caught the
// reused catalog being read after the lock was released, while another Get replaced it.
func TestCacheConcurrentGetsOfOneScope(t *testing.T) {
	cache := NewCache(nil)
	small := sampleTools()[:2]
	sets := [][]Tool{sampleTools(), small}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				tools := sets[(g+i)%2]
				cat, _, err := cache.Get("shared", tools, nil)
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, fingerprintOf(tools, nil), cat.Fingerprint(), "a Get returns the catalog of its own tools")
			}
		}()
	}
	wg.Wait()
}

// TestCacheReuseRacingARebuild holds a reusing Get between its unlock and its return while another Get of the
// same scope replaces the catalog: the first must still return the catalog of its own tools, the one it read under
// the lock. The hammering test above catches the same bug only now and then, under -race; this one every time.
func TestCacheReuseRacingARebuild(t *testing.T) {
	cache := NewCache(nil)
	all, small := sampleTools(), sampleTools()[:2]
	_, _, err := cache.Get("shared", all, nil)
	require.NoError(t, err)
	inWindow, replaced := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cache.reusing = func() {
		once.Do(func() {
			close(inWindow)
			<-replaced
		})
	}
	got := make(chan *Catalog, 1)
	go func() {
		cat, reused, err := cache.Get("shared", all, nil)
		assert.NoError(t, err)
		assert.True(t, reused)
		got <- cat
	}()
	<-inWindow
	rebuilt, reused, err := cache.Get("shared", small, nil)
	require.NoError(t, err)
	require.False(t, reused)
	close(replaced)
	cat := <-got
	require.NotNil(t, cat)
	assert.Equal(t, fingerprintOf(all, nil), cat.Fingerprint(), "a Get returns the catalog of its own tools")
	assert.NotSame(t, rebuilt, cat)
}

func TestCacheRebuildsOnChange(t *testing.T) {
	handlerA := HandlerFunc(func(context.Context, json.RawMessage) (*Result, error) { return &Result{}, nil })
	base := func() []Tool {
		tools := sampleTools()
		tools[2].Handler = handlerA
		return tools
	}
	changes := []struct {
		name string
		edit func([]Tool)
		opts *Options
	}{
		{"description", func(ts []Tool) { ts[0].Description += "!" }, nil},
		{"schema", func(ts []Tool) { ts[0].Parameters = json.RawMessage(`{"type":"object"}`) }, nil},
		{"output schema", func(ts []Tool) { ts[1].OutputSchema = nil }, nil},
		{"label", func(ts []Tool) { ts[0].Label = "Search" }, nil},
		{"groups", func(ts []Tool) { ts[0].Groups = nil }, nil},
		{"tool added", func(ts []Tool) {}, nil},
		{"catalog mode", func(ts []Tool) { ts[0].CatalogMode = CatalogModeDirectOnly }, nil},
		{"handler identity", func(ts []Tool) {
			// Same code, new closure: a handler bound to another connection must not be reused.
			ts[2].Handler = HandlerFunc(func(context.Context, json.RawMessage) (*Result, error) { return &Result{}, nil })
		}, nil},
		{"policy", func([]Tool) {}, &Options{Policy: &Policy{Agent: Rule{Deny: []string{"exec"}}}}},
		{"limits", func([]Tool) {}, &Options{MaxSearchLimit: 10}},
	}
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			cache := NewCache(nil)
			c1, _, err := cache.Get("s", base(), nil)
			require.NoError(t, err)
			c1.RecordCall()

			same, reused, err := cache.Get("s", base(), nil)
			require.NoError(t, err)
			require.True(t, reused, "the same handler value keeps its identity")
			require.Same(t, c1, same)

			tools := base()
			tc.edit(tools)
			if tc.name == "tool added" {
				tools = append(tools, Tool{Source: SourceMCP, SourceName: "x", Name: "new"})
			}
			c2, reused, err := cache.Get("s", tools, tc.opts)
			require.NoError(t, err)
			assert.False(t, reused)
			assert.NotSame(t, c1, c2)
			assert.NotEqual(t, c1.Fingerprint(), c2.Fingerprint())
			assert.Equal(t, int64(1), c2.Stats().Calls, "a scope's counters survive a rebuild")
		})
	}
}

func TestCacheScopesAreIsolated(t *testing.T) {
	cache := NewCache(nil)
	a, _, err := cache.Get("run-a", []Tool{{Source: SourceMCP, SourceName: "a", Name: "secret_a", Description: "alpha tool"}}, nil)
	require.NoError(t, err)
	b, _, err := cache.Get("run-b", []Tool{{Source: SourceMCP, SourceName: "b", Name: "secret_b", Description: "beta tool"}}, nil)
	require.NoError(t, err)

	_, err = a.Lookup("secret_b")
	var unk *UnknownToolError
	require.ErrorAs(t, err, &unk)
	hits, err := b.Search(context.Background(), "alpha secret_a", 0)
	require.NoError(t, err)
	assert.NotContains(t, ids(hits), "mcp:a:secret_a")

	// Same tools in two scopes: equal content, separate counters.
	same := sampleTools()
	x, _, err := cache.Get("x", same, nil)
	require.NoError(t, err)
	y, reused, err := cache.Get("y", same, nil)
	require.NoError(t, err)
	assert.False(t, reused)
	x.RecordCall()
	assert.Equal(t, int64(0), y.Stats().Calls)
}

func TestCacheNoScope(t *testing.T) {
	cache := NewCache(nil)
	_, _, err := cache.Get("only", sampleTools(), nil)
	require.NoError(t, err)
	c, _, err := cache.Get("", sampleTools(), nil)
	require.ErrorIs(t, err, ErrNoScope)
	assert.Nil(t, c, "never a fallback to the only catalog there is")
}

func TestCacheBuildError(t *testing.T) {
	cache := NewCache(nil)
	dup := Tool{Source: SourceMCP, SourceName: "s", Name: "a"}
	_, _, err := cache.Get("s", []Tool{dup, dup}, nil)
	require.ErrorIs(t, err, ErrDuplicateTool)
	assert.Equal(t, 0, cache.Len())

	// A tool that cannot be cataloged is reported by the catalog, which is built and kept.
	c, _, err := cache.Get("s", []Tool{dup, {Source: SourceMCP, SourceName: "s"}}, nil)
	require.NoError(t, err)
	require.Len(t, c.Rejected(), 1)
	assert.ErrorIs(t, c.Rejected()[0], ErrInvalidTool)
	assert.Equal(t, 1, cache.Len())
}

func TestCacheBound(t *testing.T) {
	cache := NewCache(&CacheOptions{MaxScopes: 3})
	tools := sampleTools()
	for i := range 3 {
		_, _, err := cache.Get(fmt.Sprint("s", i), tools, nil)
		require.NoError(t, err)
	}
	_, reused, err := cache.Get("s0", tools, nil) // s0 becomes the most recent; s1 is now the oldest
	require.NoError(t, err)
	require.True(t, reused)
	_, _, err = cache.Get("s3", tools, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, cache.Len())

	_, reused, err = cache.Get("s1", tools, nil)
	require.NoError(t, err)
	assert.False(t, reused, "the least recently used scope was evicted")
	_, reused, err = cache.Get("s0", tools, nil)
	require.NoError(t, err)
	assert.True(t, reused)

	cache.Forget("s0")
	_, reused, err = cache.Get("s0", tools, nil)
	require.NoError(t, err)
	assert.False(t, reused)
}

// Options that decide which tools are cataloged are part of the fingerprint: a catalog built without a reserved
// name or a schema check is never reused for a caller that has them.
func TestFingerprintCoversCatalogingOptions(t *testing.T) {
	fp := func(opts *Options) string {
		c, err := New(sampleTools(), opts)
		require.NoError(t, err)
		return c.Fingerprint()
	}
	plain := fp(&Options{})
	assert.NotEqual(t, plain, fp(&Options{ReservedNames: []string{"tool_call"}}))
	assert.NotEqual(t, plain, fp(&Options{CheckSchema: func(string, json.RawMessage) error { return nil }}))
	assert.Equal(t, plain, fp(&Options{}))
}
