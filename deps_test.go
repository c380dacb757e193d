package toolsearch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/toolsearch/toolsearch"

// listedPackage is the part of `go list -json` output the dependency rules need.
type listedPackage struct {
	ImportPath string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// dependencyRule is one line of the package table in docs/architecture.md, enforced. reason is printed when it
// breaks, so the person who broke it learns why the rule exists rather than only that it does.
type dependencyRule struct {
	pkg       string   // import path relative to the module; "" matches every package of ours
	forbidden []string // path prefixes; "./x" is a package of ours
	except    []string // packages of ours (relative) the rule does not apply to
	reason    string
}

var dependencyRules = []dependencyRule{
	{pkg: "signatures", forbidden: []string{"./"}, reason: "signatures is a pure renderer; everything else builds on it"},
	{pkg: "catalog", forbidden: []string{"github.com/tetratelabs/wazero", "github.com/modelcontextprotocol/go-sdk",
		"./runtime", "./wasm", "./hostfns", "./mcp", "./gateway"},
		reason: "the catalog must stay usable without the sandbox, MCP or the runtime"},
	{pkg: "wasm", forbidden: []string{"./signatures", "./catalog", "./hostfns", "./runtime", "./mcp", "./gateway"},
		reason: "the sandbox knows nothing about tools, catalogs or JSON Schema"},
	{pkg: "hostfns", forbidden: []string{"./signatures", "./catalog", "./runtime", "./mcp", "./gateway"},
		reason: "the bridge surface is catalog-agnostic; the runtime implements it"},
	{pkg: "runtime", forbidden: []string{"github.com/modelcontextprotocol/go-sdk", "github.com/openai/openai-go",
		"./mcp", "./gateway"},
		reason: "the runtime owns no provider HTTP and no MCP transport"},
	{pkg: "mcp", forbidden: []string{"./gateway", "./cmd"}, reason: "mcp is a catalog source, not an agent loop"},
	{pkg: "mcp/upstream", forbidden: []string{"./mcp/front"},
		reason: "the arrows between the MCP packages run one way: the upstream side knows nothing of fronts"},
	{pkg: "mcp/upstream", forbidden: []string{"./runtime", "./config", "github.com/tetratelabs/wazero"},
		reason: "the upstream side takes server entries already read: the config file is package config's, and " +
			"starting servers needs neither the runtime nor the sandbox"},
	{pkg: "config", forbidden: []string{"./mcp/front", "./gateway", "./cmd"},
		reason: "config reads the file into what runtime and mcp/upstream take; it serves nothing and runs no turn"},
	{pkg: "", forbidden: []string{"./config"}, except: []string{"cmd/toolsearch"},
		reason: "the config file is read by programs (cmd/toolsearch, or one embedding toolsearch) through package " +
			"config; a library package that read it would tie itself to one file and its location"},
	{pkg: "mcp/internal/seam", forbidden: []string{"./mcp/upstream", "./mcp/front"},
		reason: "the seam is what both MCP packages import; importing either would make a circle"},
	{pkg: "", forbidden: []string{"./mcp/internal/mcptest"},
		reason: "mcptest is what the MCP packages' tests share; no program needs it"},
	{pkg: "", forbidden: []string{"./internal/testskip"}, except: []string{"mcp/internal/mcptest"},
		reason: "testskip is for tests (and mcptest, which only tests import); no program needs it"},
	{pkg: "", forbidden: []string{"./internal/npmpins"},
		reason: "npmpins reads the npm servers the tests pin; no program needs it"},
	{pkg: "gateway", forbidden: []string{"github.com/modelcontextprotocol/go-sdk", "./mcp"},
		reason: "the gateway asks the runtime; MCP is wired by the caller"},
	{pkg: "", forbidden: otelSDK, except: []string{"internal/otelsetup", "cmd/toolsearch"},
		reason: "the library speaks the OpenTelemetry API alone and takes its providers from Options; the SDK and " +
			"its exporters belong to the program (internal/otelsetup, used by cmd/toolsearch)"},
	{pkg: "", forbidden: otlpCodegen,
		reason: "OTLP is written by hand (internal/otelsetup/wire.go): the generated OTLP messages, the protobuf " +
			"runtime and gRPC that the exporters of go.opentelemetry.io bring add 14 MB to the binary (RATIONALE.md)"},
}

// otlpCodegen are the packages behind the upstream OTLP exporters; tests may use them to decode what we send.
var otlpCodegen = []string{"go.opentelemetry.io/otel/exporters/otlp", "go.opentelemetry.io/proto", "google.golang.org/protobuf",
	"google.golang.org/grpc"}

// otelSDK are the OpenTelemetry packages that are not the API: the SDK, its exporters and what they pull in.
var otelSDK = []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "go.opentelemetry.io/proto",
	"google.golang.org/grpc"}

// onlyImporters says which packages alone may import a dependency directly; everyone else goes through them.
var onlyImporters = map[string][]string{
	"github.com/tetratelabs/wazero": {"wasm"},
	"github.com/fastschema/qjs":     {"wasm"},
	// mcptest is imported by their tests alone (a rule below): its fake servers are SDK servers.
	"github.com/modelcontextprotocol/go-sdk": {"mcp/upstream", "mcp/front", "mcp/internal/seam", "mcp/internal/mcptest"},
	"github.com/openai/openai-go":            {"gateway"},
}

func TestDependencyDirection(t *testing.T) {
	pkgs := listPackages(t)
	require.NotEmpty(t, pkgs)
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestDependencyRulesTrip feeds the rules packages that break them, so that a rule that no longer catches
// anything (a typo in a path, a prefix that matches too much) fails here rather than passing in silence.
func TestDependencyRulesTrip(t *testing.T) {
	const sdk = "github.com/modelcontextprotocol/go-sdk/mcp"
	ours := func(rel string) string { return module + "/" + rel }
	pkg := func(rel string, imports ...string) listedPackage {
		return listedPackage{ImportPath: ours(rel), Imports: imports, Deps: imports}
	}
	for _, tc := range []struct {
		name string
		pkg  listedPackage
		want string // "" for no violation
	}{
		{"front uses upstream", pkg("mcp/front", ours("mcp/upstream"), ours("mcp/internal/seam"), sdk), ""},
		{"upstream uses the seam", pkg("mcp/upstream", ours("mcp/internal/seam"), sdk), ""},
		{"upstream imports front", pkg("mcp/upstream", ours("mcp/front")), "the upstream side knows nothing of fronts"},
		{"upstream depends on front", listedPackage{ImportPath: ours("mcp/upstream/x"), Deps: []string{ours("mcp/front")}},
			"the upstream side knows nothing of fronts"},
		{"seam imports upstream", pkg("mcp/internal/seam", ours("mcp/upstream")), "would make a circle"},
		{"seam imports front", pkg("mcp/internal/seam", ours("mcp/front")), "would make a circle"},
		{"the root mcp package imports the SDK", pkg("mcp", sdk), "imports " + sdk + " directly"},
		{"test support imports the SDK", pkg("mcp/internal/mcptest", sdk), ""},
		{"other internal code imports the SDK", pkg("mcp/internal/other", sdk), "imports " + sdk + " directly"},
		{"cmd imports the SDK", pkg("cmd/toolsearch", sdk), "imports " + sdk + " directly"},
		{"a program imports the test support", pkg("mcp/upstream", ours("mcp/internal/mcptest")), "no program needs it"},
		{"runtime depends on the SDK", listedPackage{ImportPath: ours("runtime"), Deps: []string{sdk}}, "no MCP transport"},
		{"runtime uses the OpenTelemetry API", pkg("runtime", "go.opentelemetry.io/otel/trace", "go.opentelemetry.io/otel/metric"), ""},
		{"runtime depends on the OpenTelemetry SDK", pkg("runtime", "go.opentelemetry.io/otel/sdk/trace"), "speaks the OpenTelemetry API alone"},
		{"the front depends on an exporter", listedPackage{ImportPath: ours("mcp/front"),
			Deps: []string{"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"}}, "speaks the OpenTelemetry API alone"},
		{"otelsetup holds the SDK", pkg("internal/otelsetup", "go.opentelemetry.io/otel/sdk/trace"), ""},
		{"the command uses otelsetup", listedPackage{ImportPath: ours("cmd/toolsearch"),
			Deps: []string{ours("internal/otelsetup"), "go.opentelemetry.io/otel/sdk/trace"}}, ""},
		{"config reads into runtime and upstream types", pkg("config", ours("runtime"), ours("catalog"), ours("mcp/upstream")), ""},
		{"config imports the SDK", pkg("config", sdk), "imports " + sdk + " directly"},
		{"config imports wazero", pkg("config", "github.com/tetratelabs/wazero"), "imports github.com/tetratelabs/wazero directly"},
		{"config depends on the front", pkg("config", ours("mcp/front")), "it serves nothing and runs no turn"},
		{"the command reads the config", pkg("cmd/toolsearch", ours("config")), ""},
		{"the runtime reads the config", pkg("runtime", ours("config")), "through package config"},
		{"upstream reads the config", pkg("mcp/upstream", ours("config")), "the config file is package config's"},
		{"upstream depends on the runtime", listedPackage{ImportPath: ours("mcp/upstream"), Deps: []string{ours("runtime")}},
			"the config file is package config's"},
		{"the command depends on the protobuf runtime", listedPackage{ImportPath: ours("cmd/toolsearch"),
			Deps: []string{"google.golang.org/protobuf/proto"}}, "OTLP is written by hand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := violations([]listedPackage{tc.pkg})
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			require.NotEmpty(t, got)
			assert.Contains(t, strings.Join(got, "\n"), tc.want)
		})
	}
}

// violations lists every rule the packages break, each with its reason.
func violations(pkgs []listedPackage) []string {
	var out []string
	for _, p := range pkgs {
		rel := relative(p.ImportPath)
		for _, rule := range dependencyRules {
			if rule.pkg != "" && rel != rule.pkg && !strings.HasPrefix(rel, rule.pkg+"/") {
				continue
			}
			if slices.Contains(rule.except, rel) {
				continue
			}
			for _, dep := range p.Deps {
				for _, f := range rule.forbidden {
					if matches(dep, f) && !(strings.HasPrefix(f, "./") && isSelf(dep, p.ImportPath)) {
						out = append(out, fmt.Sprintf("%s depends on %s: %s", p.ImportPath, dep, rule.reason))
					}
				}
			}
		}
		for dep, owners := range onlyImporters {
			for _, imp := range p.Imports {
				if !matches(imp, dep) {
					continue
				}
				allowed := false
				for _, o := range owners {
					if rel == o || strings.HasPrefix(rel, o+"/") {
						allowed = true
					}
				}
				if !allowed {
					out = append(out, fmt.Sprintf("%s imports %s directly; only %v may (see docs/architecture.md)", p.ImportPath, imp, owners))
				}
			}
		}
	}
	return out
}

func TestBenchHoldsOnlyTests(t *testing.T) {
	for _, p := range listPackages(t) {
		if relative(p.ImportPath) == "bench" {
			require.Empty(t, p.GoFiles, "bench/ holds test files and testdata only")
		}
	}
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())

	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func relative(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}

func matches(dep, prefix string) bool {
	if strings.HasPrefix(prefix, "./") {
		prefix = module + "/" + strings.TrimPrefix(prefix, "./")
		if prefix == module+"/" {
			return strings.HasPrefix(dep, module+"/")
		}
	}
	return dep == prefix || strings.HasPrefix(dep, prefix+"/")
}

// isSelf lets a package depend on its own subpackages (runtime/x may import runtime).
func isSelf(dep, pkg string) bool {
	return dep == pkg || strings.HasPrefix(dep, pkg+"/") || strings.HasPrefix(pkg, dep+"/")
}

// esbuild is the TypeScript transform of code mode; only the package that prepares scripts may import it, so
// that its cost stays on the one path that needs it.
func init() { onlyImporters["github.com/evanw/esbuild"] = []string{"internal/jsprep"} }
