package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/runtime"
	"github.com/toolsearch/toolsearch/wasm"
)

const runUsage = `usage: toolsearch run [--catalog FILE] [--config FILE] [--timeout DURATION] [--fuel N] [--memory BYTES]
                      [--max-output BYTES] [--max-calls N] [--allow LIST] [--deny LIST] [--yes] FILE|-

Runs one code-mode script (JavaScript or TypeScript: the body of an async function, where ` + "`return`" + ` gives the
result, one function expression, which is called, or statements whose last expression is the result) in the sandbox, with
openclaw.tools.search/describe/call over the tools of --catalog (a JSON array of {name, description, inputSchema,
outputSchema?, source?, server?}); their calls echo their input. Prints one JSON object:
  {"ok":true,"value":...,"logs":[...],"telemetry":{...},"usage":{"fuel":N,"wallMs":N,"memoryBytes":N}}
  {"ok":false,"error":{"kind":"timeout|fuel|memory|stack|output|calls|syntax|exception|...","message":"..."},...}
Exit status: 0 ok, 1 the script failed, 2 usage error.

The limits are those of tools.toolSearch, with the same defaults and ranges: the file of --config sets them, and
each flag overrides one. A value out of range is clamped, with a warning naming the value used.

The policy of the --config file applies to the script's tools: tools.allow and tools.deny make a tool unknown,
and a call that tools.ask holds (or whose pinned definition changed) is asked about on the terminal (y/N, read
from the terminal, never from standard input, which may hold the script); the script waits meanwhile, its
deadline held. Without a terminal such a call is blocked with a message naming the rule and how to allow the
tool; --yes approves every such call and says so on stderr.

flags:
  --config FILE       take the limits from this config file's tools.toolSearch
  --timeout DURATION  codeTimeoutMs: wall-clock limit (1s to 60s; default 10s)
  --fuel N            codeFuel: CPU budget in fuel units (1000000 to 100000000000; default 2000000000)
  --memory BYTES      codeMemoryBytes: memory of the run, in bytes or with KiB, MiB or GiB (16MiB to 1GiB;
                      default 64MiB)
  --max-output BYTES  codeMaxOutputBytes: console output (1KiB to 16MiB; default 64KiB)
  --max-calls N       codeMaxCalls: searches, describes and calls (1 to 1000; default 100)
  --allow LIST        comma-separated policy allow list (names, ids, server:<s>, source:<s>, group:<g>, globs with *)
  --deny LIST         comma-separated policy deny list; a denied tool is unknown
  --yes               approve every call the policy or a changed pin holds, without asking
`

// limitFlag is a flag of run that sets a key of tools.toolSearch, read by its own parser.
type limitFlag struct {
	flag, key string
	parse     func(string) (uint64, error)
}

func limitFlags() []limitFlag {
	return []limitFlag{
		{"timeout", "codeTimeoutMs", parseMillis},
		{"fuel", "codeFuel", parseCount},
		{"memory", "codeMemoryBytes", parseBytes},
		{"max-output", "codeMaxOutputBytes", parseBytes},
		{"max-calls", "codeMaxCalls", parseCount},
	}
}

func runRun(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	catalogFile := fs.String("catalog", "", "")
	configPath := fs.String("config", "", "")
	values := map[string]*string{}
	for _, lf := range limitFlags() {
		values[lf.flag] = fs.String(lf.flag, "", "")
	}
	var source toolSource // for --allow and --deny only: the tools come from --catalog
	source.registerPolicy(fs)
	yes := fs.Bool("yes", false, "")
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
	cfg, lc, warnings, err := runLimits(ctx, *configPath, values)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch run: %v (run `toolsearch run --help`)\n", err)
		return exitUsage
	}
	printWarnings(stderr, "toolsearch run", warnings)

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

	var policy *catalog.Policy
	var pc *config.Origins
	if lc != nil {
		policy, pc = lc.Policy, lc.Origins
	}
	if policy = config.WithSession(policy, source.allow, source.deny); policy != nil {
		if err := policy.Validate(); err != nil {
			fmt.Fprintf(stderr, "toolsearch run: --allow/--deny: %v\n", err)
			return exitUsage
		}
		printWarnings(stderr, "toolsearch run", pc.UnmatchedWarnings(policy, "", tools))
	}
	approver, release := newCLIApprover(ctx, "run", *yes, policy, pc, stderr)
	defer release()
	out, failed, err := runScript(ctx, cfg, tools, code, policy, approver)
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

// runLimits resolves the limits of a run: tools.toolSearch of the config file (if any), then each flag, checked
// by runtime.CheckConfig exactly as `config set` checks a value, so the ranges and messages are the config's.
func runLimits(ctx context.Context, configPath string, values map[string]*string) (runtime.Config, *config.Config, []string, error) {
	base := runtime.DefaultConfig()
	var warnings []string
	var lc *config.Config
	if configPath != "" {
		var err error
		if lc, err = config.Load(ctx, configPath); err != nil {
			return runtime.Config{}, nil, nil, err
		}
		base, warnings = lc.ToolSearch, lc.Warnings
	}
	raw, _ := json.Marshal(base) // resolved values, all in range: only the flags can warn below
	var merged map[string]any
	_ = json.Unmarshal(raw, &merged)
	merged["enabled"], merged["mode"] = true, runtime.ModeCode
	flagOf := map[string]string{}
	for _, lf := range limitFlags() {
		v := *values[lf.flag]
		if v == "" {
			continue
		}
		key, _ := runtime.LookupConfigKey(lf.key)
		n, err := lf.parse(v)
		if err != nil || n == 0 {
			return runtime.Config{}, nil, nil, fmt.Errorf("--%s must be %s, got %q", lf.flag, flagExpected(lf.flag, key), v)
		}
		merged[lf.key] = n
		flagOf[lf.key] = lf.flag
	}
	raw, _ = json.Marshal(merged)
	cfg, flagWarnings, err := runtime.CheckConfig(raw)
	if err != nil {
		return runtime.Config{}, nil, nil, err
	}
	for _, w := range flagWarnings {
		key, _, _ := strings.Cut(w, " ")
		warnings = append(warnings, "--"+flagOf[key]+": "+w)
	}
	return cfg, lc, warnings, nil
}

// flagExpected says what a limit flag takes, in the flag's own units.
func flagExpected(flagName string, key runtime.ConfigKey) string {
	switch flagName {
	case "timeout":
		return fmt.Sprintf("a duration such as 10s or 1500ms (%s, %s)", key.Name, key.RangeText()+" ms")
	case "memory", "max-output":
		return fmt.Sprintf("a size in bytes, or with KiB, MiB or GiB, such as 64MiB (%s, %s bytes)", key.Name, key.RangeText())
	}
	return fmt.Sprintf("a positive integer such as %d (%s, %s)", key.Default, key.Name, key.RangeText())
}

func parseMillis(s string) (uint64, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("not a positive duration")
	}
	return uint64(max(d.Milliseconds(), 1)), nil
}

func parseCount(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }

// parseBytes reads 1048576, 1024KiB, 64MiB or 1GiB.
func parseBytes(s string) (uint64, error) {
	for _, unit := range []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n, ok := strings.CutSuffix(s, unit.suffix); ok {
			v, err := strconv.ParseUint(n, 10, 64)
			if err != nil || v > math.MaxUint64>>unit.shift {
				return 0, errors.New("not a size")
			}
			return v << unit.shift, nil
		}
	}
	return strconv.ParseUint(s, 10, 64)
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
func runScript(ctx context.Context, cfg runtime.Config, tools []catalog.Tool, code string, policy *catalog.Policy,
	approver runtime.Approver) (out *runOutput, failed bool, err error) {
	sb, err := cachedSandbox(cfg)(ctx)
	if err != nil {
		return nil, false, err
	}
	defer sb.Close(context.Background())
	tel := providersFrom(ctx)
	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg, Sandbox: sb, Policy: policy, Approver: approver,
		TracerProvider: tel.tp, MeterProvider: tel.mp, TraceContent: captureContent()})
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
	// Details hold the whole code result; Content is the text a model reads, which the runtime may cut.
	if err := json.Unmarshal(res.Details, out); err != nil {
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
