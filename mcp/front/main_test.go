package front

import (
	"context"
	"fmt"
	"os"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolsearch/toolsearch/internal/testskip"
	"github.com/toolsearch/toolsearch/mcp/internal/mcptest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// childEnv makes the test binary play an MCP server on stdio instead of running tests, so the front is tested
// with upstreams that are real child processes (one per client, for a per-client server) without node.
const childEnv = "TOOLSEARCH_MCP_FRONT_TEST_CHILD"

func TestMain(m *testing.M) {
	if behavior := os.Getenv(childEnv); behavior != "" {
		os.Exit(runChild(behavior))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testskip.Report()
		os.Exit(code)
	}))
}

// childConfig is a server config that starts the test binary as a child of the given behavior.
func childConfig(behavior string) upstream.ServerConfig {
	return upstream.ServerConfig{Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{childEnv: behavior}}
}

// runChild is the child's main: a server with an echo tool, whose answers start with the behavior's name, and a
// "crash" tool that writes to stderr and exits with status 3 mid-call.
func runChild(behavior string) int {
	fmt.Fprintf(os.Stderr, "pid %d\n", os.Getpid())
	srv := sdk.NewServer(&sdk.Implementation{Name: "child-" + behavior, Version: "1"}, nil)
	f := &fakeServer{mcptest.FakeServerOf(srv)}
	f.AddTool("echo", "Echo the text.", echo(behavior+": "))
	f.AddTool("crash", "Exits mid-call.", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "panic: the database went away")
		os.Exit(3)
		return nil, nil
	})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
