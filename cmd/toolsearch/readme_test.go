package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

var update = flag.Bool("update", false, "rewrite the generated tables of README.md")

const readmePath = "../../README.md"

// TestREADMEConfigTables keeps the README's tables of config keys equal to what the code accepts: the keys of
// tools.toolSearch come from runtime.ConfigKeys, the fields of an mcpServers entry from upstream.ServerConfig (types
// by reflection, descriptions from the field comments). A key added to either fails this test until the README
// is regenerated with -update.
func TestREADMEConfigTables(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	readme := string(data)
	for _, section := range []struct{ marker, table string }{
		{"config-keys", toolSearchTable()},
		{"server-keys", serverTable(t)},
		{"policy-keys", policyTable()},
	} {
		re := regexp.MustCompile(`(?s)(<!-- ` + section.marker + `:start[^\n]*-->\n)(.*?)(<!-- ` + section.marker + `:end -->)`)
		m := re.FindStringSubmatch(readme)
		require.NotNil(t, m, "README.md has no %s markers", section.marker)
		if *update {
			readme = re.ReplaceAllString(readme, "${1}"+strings.ReplaceAll(section.table, "$", "$$")+"${3}")
			continue
		}
		assert.Equal(t, section.table, m[2], "README.md's %s table is out of date: run "+
			"go test ./cmd/toolsearch -run TestREADMEConfigTables -update", section.marker)
	}
	if *update {
		require.NoError(t, os.WriteFile(readmePath, []byte(readme), 0o644))
	}
}

// policyTable is the policy keys of "tools", from the same list `config keys` prints.
func policyTable() string {
	var b strings.Builder
	b.WriteString("| key | type | what it does |\n|---|---|---|\n")
	for _, k := range policyKeyDocs {
		fmt.Fprintf(&b, "| `tools.%s` | %s | %s |\n", k.key, k.typ, k.doc)
	}
	return b.String()
}

func toolSearchTable() string {
	var b strings.Builder
	b.WriteString("| key | type | default | range | what it does |\n|---|---|---|---|---|\n")
	for _, k := range runtime.ConfigKeys() {
		def, rng := "`"+k.DefaultText()+"`", k.RangeText()
		if k.DefaultText() == "" {
			def = "unset"
		}
		if k.Type == runtime.ConfigInteger {
			def, rng = humanNumber(k.Default, k.Unit), integerRange(k)
		}
		if k.Type == runtime.ConfigEnum {
			rng = "`" + strings.Join(k.Values, "`, `") + "`"
		}
		if k.Type == runtime.ConfigBoolean {
			rng = ""
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Name, k.Type, def, rng, k.Doc)
	}
	return b.String()
}

// integerRange writes "1,000 – 60,000 ms", "16 MiB – 1 GiB" or "1 – `maxSearchLimit`".
func integerRange(k runtime.ConfigKey) string {
	switch {
	case k.MaxKey != "":
		return demoThousands(int(k.Min)) + " – `" + k.MaxKey + "`"
	case k.Unit == "bytes":
		return humanNumber(k.Min, k.Unit) + " – " + humanNumber(k.Max, k.Unit)
	}
	return demoThousands(int(k.Min)) + " – " + humanNumber(k.Max, k.Unit)
}

// humanNumber writes a default or a bound with its unit, sizes in KiB/MiB/GiB when they divide evenly.
func humanNumber(n uint64, unit string) string {
	if unit == "bytes" {
		for _, u := range []struct {
			name  string
			shift uint
		}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
			if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d %s", n>>u.shift, u.name)
			}
		}
		return fmt.Sprintf("%s bytes", demoThousands(int(n)))
	}
	s := demoThousands(int(n))
	if unit != "" {
		s += " " + unit
	}
	return s
}

func serverTable(t *testing.T) string {
	docs := serverFieldDocs(t)
	var b strings.Builder
	b.WriteString("| key | type | what it does |\n|---|---|---|\n")
	typ := reflect.TypeFor[upstream.ServerConfig]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		doc := docs[f.Name]
		assert.NotEmpty(t, doc, "upstream.ServerConfig.%s needs a doc comment: it is the README's description of %q", f.Name, name)
		expected, _ := describeType(f.Type)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, expected, doc)
	}
	return b.String()
}

// serverFieldDocs reads the doc comments of upstream.ServerConfig's fields from its source, as one line each, without
// the leading "Name is" of Go doc style.
func serverFieldDocs(t *testing.T) map[string]string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../../mcp/upstream", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	for _, pkg := range pkgs {
		ast.Inspect(pkg, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "ServerConfig" {
				return true
			}
			for _, field := range ts.Type.(*ast.StructType).Fields.List {
				text := strings.Join(strings.Fields(field.Doc.Text()), " ")
				for _, name := range field.Names {
					docs[name.Name] = withoutSubject(text, name.Name)
				}
			}
			return false
		})
	}
	return docs
}

func withoutSubject(doc, name string) string {
	for _, verb := range []string{" is ", " are "} {
		if rest, ok := strings.CutPrefix(doc, name+verb); ok && rest != "" {
			return strings.ToUpper(rest[:1]) + rest[1:]
		}
	}
	return doc
}

// TestREADMECommands runs every toolsearch command of the README's shell blocks from the repository root, except
// those that say they need the network; each must succeed. The config commands edit a copy of the example
// config ($TOOLSEARCH_CONFIG), never the file in the repository.
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	example, err := os.ReadFile("../../examples/config.json5")
	require.NoError(t, err)
	scratch := filepath.Join(t.TempDir(), "config.json5")
	require.NoError(t, os.WriteFile(scratch, example, 0o600))
	t.Setenv(runtime.ConfigPathEnv, scratch)
	t.Chdir("../..")

	ran := 0
	for _, line := range shellLines(string(data)) {
		cmd, comment, _ := strings.Cut(line, " # ")
		args := shellWords(t, cmd)
		switch {
		case len(args) == 0:
			continue
		case strings.Contains(comment, "network"), args[0] == "go" && args[1] == "install":
			continue // needs the network: the module proxy, npx
		case args[0] == "go" && args[1] == "test":
			continue // this is it
		case args[0] == "go" && args[1] == "run" && args[2] == "./cmd/toolsearch":
			args = append([]string{"toolsearch"}, args[3:]...)
		case args[0] != "toolsearch":
			continue // npm ci runs in .ci/run
		}
		if args[1] == "demo" {
			continue // TestDemo runs it
		}
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", args[1:]...)
			assert.Equal(t, exitOK, code, "%s\nstdout: %s\nstderr: %s", cmd, stdout, stderr)
		})
		ran++
	}
	assert.GreaterOrEqual(t, ran, 10, "the README's commands were found")
}

// shellLines returns the lines of the README's ```sh blocks.
func shellLines(readme string) []string {
	var lines []string
	in := false
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in:
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return lines
}

// shellWords splits a command line as a POSIX shell would for the quoting the README uses: '...' and "...".
func shellWords(t *testing.T, line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			require.GreaterOrEqual(t, end, 0, "unbalanced quote in %q", line)
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestREADMEListsEveryCommand keeps the README's command list complete: every command the CLI offers has an
// example line there.
func TestREADMEListsEveryCommand(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, line := range shellLines(string(data)) {
		if words := strings.Fields(line); len(words) > 1 && words[0] == "toolsearch" {
			listed[words[1]] = true
		}
	}
	for name := range commands() {
		assert.True(t, listed[name], "the README has no example of `toolsearch %s`", name)
	}
}

// TestREADMEPolicyExample: the complete config of the README's "Policy and approvals" loads as written, and
// means what the prose around it says.
func TestREADMEPolicyExample(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Policy and approvals\n")
	require.True(t, ok, "the README has a Policy and approvals section")
	_, block, ok := strings.Cut(section, "```json5\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	lc, err := loadConfig(writeFile(t, "config.json5", block))
	require.NoError(t, err)
	require.NotNil(t, lc.policy)
	require.Len(t, lc.profiles, 2)
	assert.Equal(t, 120000, lc.toolSearch.ApprovalTimeoutMs)
	assert.NotEmpty(t, lc.toolSearch.PinFile)

	tool := func(server, name string) *catalog.Tool {
		return &catalog.Tool{Source: catalog.SourceMCP, SourceName: server, Name: name}
	}
	assert.False(t, lc.policy.Allows(tool("github", "delete_repository")), "disabledTools")
	assert.False(t, lc.policy.Allows(tool("notes", "move_file")), "tools.deny")
	rule, ask := lc.policy.NeedsApproval(tool("github", "create_issue"))
	assert.True(t, ask)
	assert.Equal(t, "annotation:destructive", rule)
	_, ask = lc.policy.NeedsApproval(tool("github", "get_issue"))
	assert.False(t, ask, "autoApprove")
	ci := lc.profiles[slices.IndexFunc(lc.profiles, func(p policyProfile) bool { return p.Name == "ci" })].Policy
	assert.True(t, ci.Allows(tool("notes", "read_file")))
	assert.False(t, ci.Allows(tool("github", "create_issue")), "the ci profile has the readers only")
	assert.Equal(t, "CI_AGENT_TOKEN", lc.profiles[0].TokenEnv)
}
