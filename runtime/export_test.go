package runtime

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/wasm"
)

// sharedSandbox compiles the sandbox once per test binary: compiling costs about a second (more under -race),
// and every test that runs code shares it, as a process would. Test-only state: the production package keeps
// none.
var (
	sharedStarted atomic.Bool
	sharedSandbox = sync.OnceValues(func() (*hostfns.Sandbox, error) {
		sharedStarted.Store(true)
		return NewTestSandbox()
	})
)

// NewTestSandbox creates a sandbox of its own, for tests that must close or break one. wazero's compiler is Go
// code, so -race makes compiling several times slower; a machine-code cache shared by test runs pays that once
// per machine instead of once per run.
func NewTestSandbox() (*hostfns.Sandbox, error) {
	cache := filepath.Join(os.TempDir(), "toolsearch-runtime-test-wazero")
	return hostfns.New(context.Background(), &hostfns.Options{Engine: wasm.Options{CompilationCacheDir: cache}})
}

// SharedSandbox gives external tests the package's one sandbox.
func SharedSandbox() (*hostfns.Sandbox, error) { return sharedSandbox() }

// CloseSharedSandbox closes the shared sandbox if a test created it (TestMain, before the goroutine leak check).
func CloseSharedSandbox() {
	if !sharedStarted.Load() {
		return
	}
	if sb, err := sharedSandbox(); err == nil {
		_ = sb.Close(context.Background())
	}
}

// SchemaCacheLen exposes how many compiled schemas a runtime holds.
func (rt *Runtime) SchemaCacheLen() int { return rt.schemas.len() }

// OnSchemaCompile makes rt call f before it compiles a schema (not before it reuses a compiled one).
func (rt *Runtime) OnSchemaCompile(f func()) { rt.schemas.compiling = f }

// ResolveConfig applies defaults and clamps, as New does.
func ResolveConfig(c Config) Config { return c.resolved() }
