package catalog

import (
	"sync"

	"github.com/toolsearch/toolsearch/internal/lru"
)

// DefaultMaxScopes is the default bound of a Cache.
const DefaultMaxScopes = 256

// CacheOptions configure NewCache. A nil *CacheOptions means the defaults.
type CacheOptions struct {
	// MaxScopes bounds how many runs or sessions keep a catalog (0 → DefaultMaxScopes); the least recently used
	// scope is evicted, and its next Get builds afresh.
	MaxScopes int
}

// Cache holds one catalog per run or session scope, so that a scope whose tool set did not change gets its
// catalog back instead of a rebuild every turn. Scopes never share catalogs or counters. There is no global
// cache: the embedder owns one. A Cache is safe for concurrent use.
type Cache struct {
	mu     sync.Mutex
	scopes *lru.Index[string, *scopeEntry]
	// reusing, when set (by tests only), runs in Get between releasing the lock and returning a reused catalog:
	// it holds open the moment in which another Get may replace the scope's catalog.
	reusing func()
}

type scopeEntry struct {
	cat   *Catalog
	stats *counters
}

// NewCache returns an empty cache.
func NewCache(opts *CacheOptions) *Cache {
	n := DefaultMaxScopes
	if opts != nil && opts.MaxScopes > 0 {
		n = opts.MaxScopes
	}
	return &Cache{scopes: lru.New[string, *scopeEntry](n)}
}

// Get returns the catalog of scope for tools and opts. When the scope's last catalog was built from the same
// fingerprint it is returned as is (reused is true). Otherwise a new catalog is built; it keeps the scope's
// counters, so search/describe/call counts of a run survive a change of its tool set. An empty scope is
// ErrNoScope: a missing run id must fail, never fall back to some other run's catalog.
func (c *Cache) Get(scope string, tools []Tool, opts *Options) (cat *Catalog, reused bool, err error) {
	if scope == "" {
		return nil, false, ErrNoScope
	}
	fp := fingerprintOf(tools, opts)

	c.mu.Lock()
	stats := &counters{}
	if e, ok := c.scopes.Get(scope); ok {
		if cat := e.cat; cat.fingerprint == fp {
			c.mu.Unlock() // e.cat may be replaced once the lock is released: return the one read under it
			if c.reusing != nil {
				c.reusing()
			}
			return cat, true, nil
		}
		stats = e.stats
	}
	c.mu.Unlock()

	// Build outside the lock: a large catalog takes a while, and other scopes must not wait for it.
	built, err := newCatalog(tools, opts, fp, stats, defaultRankConfig())
	if err != nil {
		return nil, false, err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.scopes.Get(scope); ok {
		if e.cat.fingerprint == fp {
			return e.cat, true, nil // a concurrent Get of the same scope won the race
		}
		e.cat = built
		return built, false, nil
	}
	c.scopes.Put(scope, &scopeEntry{cat: built, stats: stats})
	return built, false, nil
}

// Len is the number of scopes holding a catalog.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.scopes.Len()
}

// Forget drops a scope (a run that ended); its next Get starts with fresh counters.
func (c *Cache) Forget(scope string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scopes.Remove(scope)
}
