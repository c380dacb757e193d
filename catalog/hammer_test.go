package catalog

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHammer runs P goroutines × N iterations of search, batch search, describe, lookup and call counting on one
// catalog, plus cache gets on shared and private scopes. Run with -race; the counters prove no update was lost.
func TestHammer(t *testing.T) {
	tools := append(sampleTools(), synthTools(300)...)
	c := mustNew(t, tools, nil)
	cache := NewCache(&CacheOptions{MaxScopes: 4})
	p, n := 4*runtime.GOMAXPROCS(0), 200
	if testing.Short() {
		n = 20
	}
	queries := []string{"web search", "sceenshot", "create_issue", "mcp:jira:create_issue", "invoice customer", ""}
	want, err := c.Search(context.Background(), "sceenshot", 5)
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make(chan error, p)
	for g := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := range n {
				q := queries[(g+i)%len(queries)]
				if _, err := c.Search(ctx, q, 5); err != nil {
					errs <- err
					return
				}
				if got, _ := c.Search(ctx, "sceenshot", 5); !assert.ObjectsAreEqual(want, got) {
					errs <- fmt.Errorf("search result changed under load")
					return
				}
				if _, err := c.SearchBatch(ctx, queries, 3); err != nil {
					errs <- err
					return
				}
				if _, err := c.Describe("web_search"); err != nil {
					errs <- err
					return
				}
				var amb *AmbiguousToolError
				if _, err := c.Lookup("create_issue"); !errors.As(err, &amb) {
					errs <- fmt.Errorf("lookup: %v", err)
					return
				}
				c.RecordCall()
				if _, _, err := cache.Get(fmt.Sprint("scope-", (g+i)%6), tools[:8], nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	total := int64(p * n)
	assert.Equal(t, Stats{Searches: 1 + total*2 + total*int64(len(queries)), Describes: total, Calls: total}, c.Stats())
	assert.LessOrEqual(t, cache.Len(), 4)
}
