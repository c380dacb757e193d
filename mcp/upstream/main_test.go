package upstream

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/toolsearch/toolsearch/internal/testskip"
	"github.com/toolsearch/toolsearch/mcp/internal/mcptest"
)

// childEnv makes the test binary play an MCP server on stdio instead of running tests, so the process paths
// (start, exit, crash, stubborn shutdown, process groups) are tested with a real child and without node.
const childEnv = "TOOLSEARCH_MCP_TEST_CHILD"

func TestMain(m *testing.M) {
	if behavior := os.Getenv(childEnv); behavior != "" {
		os.Exit(runChild(behavior))
	}
	if behavior := os.Getenv(frontEnv); behavior != "" {
		os.Exit(runFront(behavior))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testskip.Report()
		os.Exit(code)
	}))
}

// frontEnv makes the test binary play a front: a Source with one server of the given child behavior, its
// progress and the server's stderr on its own stderr, until it is killed.
const frontEnv = "TOOLSEARCH_MCP_TEST_FRONT"

func runFront(behavior string) int {
	src, err := New(context.Background(), &Config{Servers: map[string]ServerConfig{"s": childConfig(behavior)}},
		&Options{Progress: os.Stderr, ServerStderr: os.Stderr, StartTimeout: time.Hour})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer src.Close(context.Background())
	select {} // until SIGKILL
}

// childConfig is a server config that starts the test binary as a child of the given behavior.
func childConfig(behavior string) ServerConfig {
	return ServerConfig{Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{childEnv: behavior}}
}

// stdio is the child's standard input and output as one connection.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return nil }

// runChild is the child's main. Behaviors:
//   - echo: a well-behaved server with an echo tool;
//   - crash: its "crash" tool writes to stderr and exits with status 3 mid-call;
//   - exit: writes a reason to stderr and exits with status 2 before the handshake;
//   - garbage: writes a line that is not JSON-RPC, then waits;
//   - stubborn: ignores stdin EOF and SIGTERM, and leaves a grandchild (its pid on stderr) that must be killed too;
//   - deaf: its "deafen" tool makes it stop reading stdin for good, as a hung server does;
//   - broken-install: writes what Node.js does when a package of its install is missing, and exits with status 1;
//   - install: works the CPU for INSTALL_SECONDS without reading stdin or writing, then serves as echo;
//   - hang: leaves a grandchild (its pid on stderr) and never answers initialize, as a runner installing;
//   - bigpages, bomb: hostile listings (see hostileListing);
//   - names: lists awkwardNames (and crash), each tool answering with its own name.
func runChild(behavior string) int {
	fmt.Fprintf(os.Stderr, "pid %d\n", os.Getpid())
	switch behavior {
	case "hang":
		// An install under way: a grandchild working, and no answer to initialize.
		sleeper := exec.Command("sleep", "300")
		if err := sleeper.Start(); err == nil {
			fmt.Fprintf(os.Stderr, "grandchild %d\n", sleeper.Process.Pid)
		}
		time.Sleep(time.Hour)
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: GITHUB_TOKEN is not set")
		return 2
	case "install":
		// A runner installing: busy, silent, deaf to stdin, for INSTALL_SECONDS; then a server. With
		// INSTALL_IF_FILE set, only once that file exists (a later start installs, the first does not).
		secs, _ := strconv.Atoi(os.Getenv("INSTALL_SECONDS"))
		if marker := os.Getenv("INSTALL_IF_FILE"); marker != "" {
			if _, err := os.Stat(marker); err != nil {
				secs = 0
			}
		}
		for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); {
		}
	case "broken-install":
		fmt.Fprint(os.Stderr, nodeModuleNotFound)
		return 1
	case "garbage":
		fmt.Println("Server starting... (this line is not JSON-RPC)")
		time.Sleep(time.Minute)
		return 0
	case "bigpages", "bomb":
		rawServer(stdio{os.Stdin, os.Stdout}, hostileListing(behavior))
		return 0
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "child-" + behavior, Version: "1"}, nil)
	f := &fakeServer{mcptest.FakeServerOf(srv)}
	if behavior == "names" {
		for _, name := range awkwardNames {
			f.AddTool(name, "Answers with its own name.", echo(name+": "))
		}
	} else {
		f.AddTool("echo", "Echo the text.", echo(behavior+": "))
	}
	f.AddTool("crash", "Exits mid-call.", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "panic: the database went away")
		os.Exit(3)
		return nil, nil
	})
	var transport sdk.Transport = &sdk.StdioTransport{}
	if behavior == "deaf" {
		stdin := &deafReader{r: os.Stdin, deaf: make(chan struct{})}
		transport = &sdk.IOTransport{Reader: stdin, Writer: nopWriteCloser{os.Stdout}}
		f.AddTool("deafen", "Stops reading stdin.", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			stdin.once.Do(func() { close(stdin.deaf) })
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deaf"}}}, nil
		})
	}
	if behavior == "stubborn" {
		// SIGPIPE too: the Go runtime ends a program whose write to a closed stdout fails, which would make the
		// child exit by itself once the Source closes the pipe.
		signal.Ignore(syscall.SIGTERM, syscall.SIGPIPE)
		sleeper := exec.Command("sleep", "300")
		if err := sleeper.Start(); err == nil {
			fmt.Fprintf(os.Stderr, "grandchild %d\n", sleeper.Process.Pid)
		}
	}
	err := srv.Run(context.Background(), transport)
	if behavior == "stubborn" {
		time.Sleep(time.Hour) // stdin is closed: a well-behaved server would exit here
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// deafReader reads the child's stdin until deaf is closed, then blocks for good.
type deafReader struct {
	r    io.ReadCloser
	deaf chan struct{}
	once sync.Once
}

func (d *deafReader) Read(p []byte) (int, error) {
	select {
	case <-d.deaf:
		time.Sleep(time.Hour) // a hung server: the process lives on, its input piles up
	default:
	}
	return d.r.Read(p)
}

func (d *deafReader) Close() error { return d.r.Close() }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
