package runtime_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolsearch/toolsearch/runtime"
)

// TestMain closes the shared sandbox and then fails the run if any test left a goroutine behind: bridged calls,
// handlers and hooks run on their own goroutines, and every one of them must be gone when Execute returns.
func TestMain(m *testing.M) {
	code := m.Run()
	runtime.CloseSharedSandbox()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
