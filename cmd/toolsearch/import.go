package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/config"
)

const importUsage = `usage: toolsearch import [--from CLIENT] [FILE]
       toolsearch import --write [--config OUT] [--force] [--from CLIENT] [FILE]
       toolsearch import --undo [--from CLIENT] [FILE]

Moves the MCP servers of another client into a toolsearch config, and makes toolsearch that client's only MCP
server. Without --write it prints what it would do. FILE is the client's config file; without it, the client
files of the usual places are read (Claude Desktop, Claude Code's ~/.claude.json and .mcp.json, Cursor, VS Code,
Windsurf, Gemini CLI; the project files of the current directory).

--write writes every server (command, args, env, cwd, url, headers, and the settings toolsearch shares) into the
toolsearch config, keeps a backup of the client's file beside it (FILE.toolsearch-backup), and rewrites the
client's servers as one, "toolsearch": this binary running mcp serve --config OUT. Every other setting of the
file stays as it was. Running it again merges servers added since into the same config.

flags:
  --write          do it
  --config OUT     the toolsearch config to write (default: the one the client already starts, else
                   $TOOLSEARCH_CONFIG or ~/.config/toolsearch/config.json5)
  --force          write into an existing toolsearch config that the client does not start yet (servers merged,
                   a server of the same name replaced)
  --from CLIENT    the client: claude-desktop, claude-code, cursor, vscode, windsurf, gemini (default: from
                   the file's name and content)
  --project DIR    Claude Code's project whose servers in ~/.claude.json move too (default: the current
                   directory)
  --undo           put the client's file back from its backup
`

func runImport(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	write := fs.Bool("write", false, "")
	undo := fs.Bool("undo", false, "")
	force := fs.Bool("force", false, "")
	out := fs.String("config", "", "")
	from := fs.String("from", "", "")
	project := fs.String("project", "", "")
	rest, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(stdout, importUsage)
		return exitOK
	}
	switch {
	case err != nil:
		return importUsageError(stderr, err.Error())
	case len(rest) > 1:
		return importUsageError(stderr, "give at most one FILE")
	case *write && *undo:
		return importUsageError(stderr, "give --write or --undo, not both")
	case *from != "" && !slices.Contains(config.Clients(), config.Client(*from)):
		return importUsageError(stderr, fmt.Sprintf("unknown client %q for --from (known: %s)", *from, clientList()))
	case (*out != "" || *force) && !*write:
		return importUsageError(stderr, "--config and --force go with --write")
	}
	if *project == "" {
		*project, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(*project); err == nil {
		*project = abs
	}

	files, err := importFiles(rest, config.Client(*from), *project, *undo)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch import: %v\n", err)
		return exitFailure
	}
	if *undo {
		if len(files) != 1 {
			return importUsageError(stderr, "several client files have a backup ("+pathList(files)+"): name one as FILE")
		}
		if err := config.Undo(ctx, files[0].Path); err != nil {
			fmt.Fprintf(stderr, "toolsearch import: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "%s is back as it was before toolsearch import (the toolsearch config stays where it is).\n", files[0].Path)
		return exitOK
	}

	var plans []*config.Plan
	for _, f := range files {
		p, err := config.ReadClientFile(ctx, f)
		if err != nil {
			fmt.Fprintf(stderr, "toolsearch import: %v\n", err)
			return exitFailure
		}
		plans = append(plans, p)
	}
	exe, exeErr := executable()
	if !*write {
		for i, p := range plans {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			target, err := importTarget(p, *out)
			if err != nil {
				fmt.Fprintf(stderr, "toolsearch import: %v\n", err)
				return exitFailure
			}
			printPlan(stdout, p, target, exe)
		}
		return exitOK
	}
	if len(plans) != 1 {
		return importUsageError(stderr, "several client files have MCP servers ("+pathList(files)+"): name one as FILE, "+
			"or the client with --from")
	}
	if exeErr != nil {
		fmt.Fprintf(stderr, "toolsearch import: %v\n", exeErr)
		return exitFailure
	}
	p := plans[0]
	if len(p.Servers) == 0 && p.Toolsearch != "" {
		fmt.Fprintf(stdout, "%s already starts toolsearch only (--config %s): nothing to import.\n", p.File.Path, p.ToolsearchConfig)
		return exitOK
	}
	if len(p.Servers) == 0 {
		printNotes(stderr, p)
		fmt.Fprintf(stderr, "toolsearch import: %s has no MCP servers toolsearch can serve: nothing to import\n", p.File.Path)
		return exitFailure
	}
	target, err := importTarget(p, *out)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch import: %v\n", err)
		return exitFailure
	}
	res, err := p.Write(ctx, &config.WriteOptions{Config: target, Executable: exe, Force: *force})
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch import: %v\n", err)
		return exitFailure
	}
	if len(res.Added) > 0 {
		fmt.Fprintf(stdout, "wrote %s: %s\n", res.Config, countNames(len(res.Added), "server", res.Added))
	}
	if len(res.Unchanged) > 0 {
		fmt.Fprintf(stdout, "already in %s: %s\n", res.Config, strings.Join(res.Unchanged, ", "))
	}
	printNotes(stdout, p)
	fmt.Fprintf(stdout, "%s now starts toolsearch: %s %s\n", p.File.Path, res.Entry.Command, strings.Join(res.Entry.Args, " "))
	kept := "kept"
	if res.BackupKept {
		kept = "kept from the first import"
	}
	fmt.Fprintf(stdout, "backup %s: %s (undo: toolsearch import --undo %s)\n", kept, res.Backup, p.File.Path)
	fmt.Fprintf(stdout, "Restart %s to use it.\n", p.File.Client.Title())
	return exitOK
}

// importFiles are the client files to read: FILE, else those of the usual places that exist and have servers
// (for --undo: a backup).
func importFiles(args []string, from config.Client, project string, undo bool) ([]config.ClientFile, error) {
	if len(args) == 1 {
		path, err := filepath.Abs(args[0])
		if err != nil {
			return nil, err
		}
		f := config.ClientFile{Client: from, Path: path}
		if from == "" || from == config.ClientClaudeCode {
			if filepath.Base(path) == ".claude.json" {
				f.Project = project
			}
		}
		if !undo {
			if _, err := os.Stat(path); err != nil {
				return nil, err
			}
		}
		return []config.ClientFile{f}, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	var found []config.ClientFile
	candidates := config.ClientFiles(goruntime.GOOS, home, os.Getenv("APPDATA"), project)
	for _, f := range candidates {
		if from != "" && f.Client != from {
			continue
		}
		if undo {
			if _, err := os.Stat(f.Path + config.BackupSuffix); err == nil {
				found = append(found, f)
			}
			continue
		}
		data, err := os.ReadFile(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if p, err := config.PlanImport(f, data); err == nil && (len(p.Servers) > 0 || p.Toolsearch != "") {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		what := "no client config file with MCP servers"
		if undo {
			what = "no client config file with a backup"
		}
		var looked []string
		for _, f := range candidates {
			if from == "" || f.Client == from {
				looked = append(looked, f.Path)
			}
		}
		return nil, fmt.Errorf("%s in the usual places (%s): name the file as FILE", what, strings.Join(looked, ", "))
	}
	return found, nil
}

// importTarget is the toolsearch config an import writes: --config, else the one the client starts, else the
// default config file.
func importTarget(p *config.Plan, out string) (string, error) {
	if out == "" {
		out = p.ToolsearchConfig
	}
	if out == "" {
		var err error
		if out, err = config.DefaultPath(os.Getenv); err != nil {
			return "", err
		}
	}
	return filepath.Abs(out)
}

// executable is the absolute path of this binary, as the client's entry names it. A link is kept as it is (a
// package manager's link outlives the versioned file it points to); a binary `go run` built in a temporary
// directory, gone once it exits, is refused.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where this toolsearch binary is: %w", err)
	}
	if temporaryBuild(exe) {
		return exe, fmt.Errorf("%s is a temporary build of `go run`, which the client could not start later: install "+
			"toolsearch (go install github.com/toolsearch/toolsearch/cmd/toolsearch@latest) and run the installed one", exe)
	}
	return filepath.Abs(exe)
}

// temporaryBuild reports whether path is in a build directory of the go command.
func temporaryBuild(path string) bool {
	for _, dir := range strings.Split(filepath.ToSlash(path), "/") {
		if strings.HasPrefix(dir, "go-build") {
			return true
		}
	}
	return false
}

// printPlan says what --write would do. Values of env and headers are secrets: only their names are shown.
func printPlan(w io.Writer, p *config.Plan, target, exe string) {
	fmt.Fprintf(w, "%s: %s\n", p.File.Client.Title(), p.File.Path)
	if p.Toolsearch != "" {
		fmt.Fprintf(w, "  already starts toolsearch (%q, --config %s)\n", p.Toolsearch, p.ToolsearchConfig)
	}
	if len(p.Servers) == 0 {
		fmt.Fprintln(w, "  no servers to move")
		return
	}
	fmt.Fprintf(w, "  %s to move into %s:\n", countNames(len(p.Servers), "server", nil), target)
	width := 0
	for _, s := range p.Servers {
		width = max(width, len(s.Name))
	}
	for _, s := range p.Servers {
		what := strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
		if s.URL != "" {
			what = s.URL
		}
		var extra []string
		if len(s.Env) > 0 {
			extra = append(extra, "env: "+strings.Join(sortedKeys(s.Env), ", "))
		}
		if len(s.Headers) > 0 {
			extra = append(extra, "headers: "+strings.Join(sortedKeys(s.Headers), ", "))
		}
		if s.Disabled {
			extra = append(extra, "disabled")
		}
		if len(extra) > 0 {
			what += " (" + strings.Join(extra, "; ") + ")"
		}
		fmt.Fprintf(w, "    %-*s  %s\n", width, s.Name, what)
	}
	printNotes(w, p)
	fmt.Fprintf(w, "  then %s starts only: %s mcp serve --config %s\n", p.File.Client.Title(), exe, target)
	if _, err := os.Stat(target); err == nil && (p.ToolsearchConfig == "" || !sameImportFile(target, p.ToolsearchConfig)) {
		fmt.Fprintf(w, "  %s exists: --write refuses to change it; name another with --config, or merge into it with --force\n", target)
	}
	fmt.Fprintf(w, "Run `toolsearch import --write %s` to do it (a backup of the file is kept beside it).\n", p.File.Path)
}

func printNotes(w io.Writer, p *config.Plan) {
	for _, k := range p.Kept {
		fmt.Fprintf(w, "  %s\n", k)
	}
	if len(p.NotCarried) > 0 {
		fmt.Fprintln(w, "  not carried over:")
		for _, n := range p.NotCarried {
			fmt.Fprintf(w, "    %s\n", n)
		}
	}
}

func sameImportFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func countNames(n int, noun string, names []string) string {
	s := fmt.Sprintf("%d %s", n, noun)
	if n != 1 {
		s += "s"
	}
	if len(names) > 0 {
		s += " (" + strings.Join(names, ", ") + ")"
	}
	return s
}

func clientList() string {
	var names []string
	for _, c := range config.Clients() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

func pathList(files []config.ClientFile) string {
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	return strings.Join(paths, ", ")
}

func importUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "toolsearch import: %s (run `toolsearch import --help`)\n", msg)
	return exitUsage
}
