package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/runtime"
	"github.com/toolsearch/toolsearch/wasm"
)

const runUsage = `usage: toolsearch run [--catalog FILE] [--timeout DURATION] [--fuel N] [--memory BYTES] FILE|-

Runs one code-mode script (the body of an async function; ` + "`return`" + ` gives the result) in the sandbox, with
openclaw.tools.search/describe/call over the tools of --catalog (a JSON array of {name, description, inputSchema,
outputSchema?, source?, server?}); their calls echo their input. Prints one JSON object:
  {"ok":true,"value":...,"logs":[...],"telemetry":{...},"usage":{"fuel":N,"wallMs":N,"memoryBytes":N}}
  {"ok":false,"error":{"kind":"timeout|fuel|memory|stack|output|calls|syntax|exception|...","message":"..."},...}
Exit status: 0 ok, 1 the script failed, 2 usage error. The timeout is clamped to 1s..60s like codeTimeoutMs.
`

func runRun(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	catalogFile := fs.String("catalog", "", "catalog file (JSON array of tools)")
	timeout := fs.Duration("timeout", time.Duration(runtime.DefaultCodeTimeoutMs)*time.Millisecond, "wall-clock limit")
	fuel := fs.String("fuel", "", "fuel budget (positive integer)")
	memory := fs.String("memory", "", "memory limit in bytes (positive integer)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, runUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "toolsearch run: %v (run `toolsearch run --help`)\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "toolsearch run: needs exactly one script FILE or - for stdin (run `toolsearch run --help`)")
		return exitUsage
	}
	cfg := runtime.DefaultConfig()
	cfg.Enabled, cfg.Mode = true, runtime.ModeCode
	cfg.CodeTimeoutMs = int(timeout.Milliseconds())
	for _, f := range []struct {
		name, value string
		dst         *uint64
	}{{"fuel", *fuel, &cfg.CodeFuel}, {"memory", *memory, &cfg.CodeMemoryBytes}} {
		if f.value == "" {
			continue
		}
		n, err := strconv.ParseUint(f.value, 10, 64)
		if err != nil || n == 0 {
			fmt.Fprintf(stderr, "toolsearch run: --%s must be a positive integer, got %q (run `toolsearch run --help`)\n", f.name, f.value)
			return exitUsage
		}
		*f.dst = n
	}

	code, err := readScript(fs.Arg(0), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch run: %v\n", err)
		return exitUsage
	}
	var tools []catalog.Tool
	if *catalogFile != "" {
		data, err := os.ReadFile(*catalogFile)
		if err != nil {
			fmt.Fprintf(stderr, "toolsearch run: %v\n", err)
			return exitUsage
		}
		if tools, err = catalog.ParseFile(data); err != nil {
			fmt.Fprintf(stderr, "toolsearch run: %s: %v\n", *catalogFile, err)
			return exitUsage
		}
		for i := range tools {
			if tools[i].Handler == nil {
				tools[i].Handler = echoHandler
			}
		}
	}

	out, failed, err := runScript(ctx, cfg, tools, code)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch run: %v\n", err)
		return exitFailure
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "toolsearch run: %v\n", err)
		return exitFailure
	}
	if failed {
		return exitFailure
	}
	return exitOK
}

func readScript(name string, stdin io.Reader) (string, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	return string(data), err
}

// echoHandler stands in for catalog-file tools, which have no implementation: a call returns its input.
var echoHandler = catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
	return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: string(args)}}, Details: args}, nil
})

// runOutput is the one JSON object `toolsearch run` prints.
type runOutput struct {
	OK        bool               `json:"ok"`
	Value     json.RawMessage    `json:"value,omitempty"`
	Error     *hostfns.ErrorInfo `json:"error,omitempty"`
	Logs      []string           `json:"logs"`
	Telemetry json.RawMessage    `json:"telemetry,omitempty"`
	Usage     runUsageStats      `json:"usage"`
}

type runUsageStats struct {
	Fuel        uint64 `json:"fuel"`
	WallMs      int64  `json:"wallMs"`
	MemoryBytes uint64 `json:"memoryBytes"`
}

// runScript runs code through the runtime's code mode, so `toolsearch run` exercises exactly the path a model's
// tool_search_code call takes.
func runScript(ctx context.Context, cfg runtime.Config, tools []catalog.Tool, code string) (out *runOutput, failed bool, err error) {
	sb, err := cachedSandbox(cfg)(ctx)
	if err != nil {
		return nil, false, err
	}
	defer sb.Close(context.Background())
	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg, Sandbox: sb})
	if err != nil {
		return nil, false, err
	}
	defer rt.Close(context.Background())
	run, err := rt.StartRun(ctx, runtime.RunRequest{SessionID: "toolsearch-run", Tools: tools})
	if err != nil {
		return nil, false, err
	}
	defer run.Close()
	args, _ := json.Marshal(map[string]string{"code": code})
	res, err := run.Execute(ctx, runtime.ToolCall{ID: "run", Name: runtime.ToolSearchCodeName, Arguments: args})
	if err != nil {
		return nil, false, err
	}
	out = &runOutput{}
	if err := json.Unmarshal([]byte(res.Content), out); err != nil {
		// Not a code result (e.g. the arguments were refused): report the runtime's message as is.
		out = &runOutput{Error: &hostfns.ErrorInfo{Kind: "internal", Message: res.Content}}
	}
	if out.Logs == nil {
		out.Logs = []string{}
	}
	usage := run.Telemetry().Sandbox
	out.Usage = runUsageStats{Fuel: usage.Fuel, WallMs: usage.Wall.Milliseconds(), MemoryBytes: usage.PeakMemoryBytes}
	return out, !out.OK, nil
}

// cachedSandbox creates the code sandbox of cfg with the on-disk compilation cache, so that every command that
// runs code (run, mcp serve) starts from compiled code after its first start.
func cachedSandbox(cfg runtime.Config) func(context.Context) (*hostfns.Sandbox, error) {
	return func(ctx context.Context) (*hostfns.Sandbox, error) {
		return hostfns.New(ctx, &hostfns.Options{Engine: wasm.Options{
			MaxMemoryBytes:      max(cfg.CodeMemoryBytes, wasm.DefaultMaxMemoryBytes),
			CompilationCacheDir: compilationCacheDir(),
		}})
	}
}

// compilationCacheDir keeps compiled sandbox code between CLI invocations (~1.5 s cold, ~0.25 s cached). An
// unusable cache directory just means compiling every time.
func compilationCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	dir := filepath.Join(base, "toolsearch", "wazero")
	if os.MkdirAll(dir, 0o700) != nil {
		return ""
	}
	return dir
}
