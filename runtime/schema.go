package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/lru"
)

// Bounds of schema handling. Tool schemas come from MCP servers and clients too, so their size and the number
// kept compiled are bounded like any other untrusted input.
const (
	maxSchemaBytes       = catalog.MaxSchemaBytes
	defaultSchemaEntries = 4096
	maxValidationIssues  = 8
	schemaURL            = "mem:///toolsearch/schema.json"
)

// errRemoteRef is what every $ref (or $schema) outside the schema itself resolves to.
var errRemoteRef = errors.New("remote and file references are not loaded")

// refuseLoader is the compiler's only URLLoader: every remote or file $ref fails, so compiling an untrusted
// schema can neither read local files nor reach the network. The standard metaschemas are embedded in
// jsonschema and never reach a loader.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: %s", errRemoteRef, url)
}

// schemaCache compiles each schema once and keeps it, keyed by a hash of the schema bytes: a tool rebuilt with a
// new schema never meets its old contract, and the many tools that share one schema (a plugin's, a server's)
// share one compilation, since a compiled schema is immutable. Compilation happens outside the lock, once per
// key, with a fresh Compiler each time (a shared Compiler is not safe for concurrent use). The cache is bounded (least recently used out) and safe for
// concurrent use.
type schemaCache struct {
	mu      sync.Mutex
	entries *lru.Index[string, *schemaEntry]
	// compiling, when set (by tests only), runs before each compilation: it holds a call inside the pipeline's
	// validation step, between its checks of the turn's context.
	compiling func()
}

type schemaEntry struct {
	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

func newSchemaCache(maxEntries int) *schemaCache {
	if maxEntries <= 0 {
		maxEntries = defaultSchemaEntries
	}
	return &schemaCache{entries: lru.New[string, *schemaEntry](maxEntries)}
}

// get returns the compiled schema for raw; an error means raw is not a usable JSON Schema.
func (c *schemaCache) get(raw json.RawMessage) (*jsonschema.Schema, error) {
	sum := sha256.Sum256(raw)
	key := hex.EncodeToString(sum[:])

	c.mu.Lock()
	e, ok := c.entries.Get(key)
	if !ok {
		e = &schemaEntry{}
		c.entries.Put(key, e)
	}
	c.mu.Unlock()

	e.once.Do(func() {
		if c.compiling != nil {
			c.compiling()
		}
		e.schema, e.err = compileSchema(raw)
	})
	return e.schema, e.err
}

// checkInput compiles a tool's input schema into the cache, for catalog.Options.CheckSchema: a tool is only
// cataloged when its calls can be validated, and its calls then find the schema compiled.
func (c *schemaCache) checkInput(_ string, schema json.RawMessage) error {
	_, err := c.get(schema)
	return err
}

// len is the number of schemas held.
func (c *schemaCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// compileSchema compiles an untrusted schema with the deny-all loader. A schema that names no draft and is
// invalid under the default one (2020-12) is tried as draft 7, then draft 4: real servers write older drafts
// without saying so (zod-to-json-schema, behind many MCP servers, emits draft 4's boolean "exclusiveMinimum":
// true, which 2020-12 refuses). Such a tool means what its draft says, and refusing it would make it uncallable.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("schema is %d bytes, over the %d byte limit", len(raw), maxSchemaBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	schema, err := compileDraft(doc, nil)
	var invalid *jsonschema.SchemaValidationError
	if err == nil || !errors.As(err, &invalid) || namesDraft(doc) {
		return schema, err
	}
	for _, draft := range []*jsonschema.Draft{jsonschema.Draft7, jsonschema.Draft4} {
		if schema, retryErr := compileDraft(doc, draft); retryErr == nil {
			return schema, nil
		}
	}
	return nil, err
}

func compileDraft(doc any, draft *jsonschema.Draft) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	if draft != nil {
		c.DefaultDraft(draft)
	}
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// namesDraft reports whether a schema says which draft it follows: then only that draft applies.
func namesDraft(doc any) bool {
	obj, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	_, ok = obj["$schema"]
	return ok
}
