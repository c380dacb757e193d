package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/internal/json5"
)

// Client is an MCP client whose config file Import reads.
type Client string

// The clients Import knows.
const (
	ClientClaudeDesktop Client = "claude-desktop"
	ClientClaudeCode    Client = "claude-code"
	ClientCursor        Client = "cursor"
	ClientVSCode        Client = "vscode"
	ClientWindsurf      Client = "windsurf"
	ClientGemini        Client = "gemini"
)

// Clients lists every Client, in the order defaults are searched.
func Clients() []Client {
	return []Client{ClientClaudeDesktop, ClientClaudeCode, ClientCursor, ClientVSCode, ClientWindsurf, ClientGemini}
}

// Title is the client's name as its users know it.
func (c Client) Title() string {
	switch c {
	case ClientClaudeDesktop:
		return "Claude Desktop"
	case ClientClaudeCode:
		return "Claude Code"
	case ClientCursor:
		return "Cursor"
	case ClientVSCode:
		return "VS Code"
	case ClientWindsurf:
		return "Windsurf"
	case ClientGemini:
		return "Gemini CLI"
	}
	return string(c)
}

// BackupSuffix is added to a client file's name for the copy Write keeps of it, which Undo puts back.
const BackupSuffix = ".toolsearch-backup"

// The errors of an import. Each is wrapped with the path or server it is about.
var (
	// ErrImport is wrapped by every error below.
	ErrImport = errors.New("cannot import")
	// ErrUnknownClient: the file is no MCP config of a client Import knows.
	ErrUnknownClient = fmt.Errorf("%w: not an MCP client config", ErrImport)
	// ErrTargetExists: the toolsearch config to write exists, and this import does not merge into it.
	ErrTargetExists = fmt.Errorf("%w: the toolsearch config exists", ErrImport)
	// ErrServerConflict: a server of the client has the name of a different server of the toolsearch config.
	ErrServerConflict = fmt.Errorf("%w: a server of that name exists", ErrImport)
	// ErrNoBackup: Undo found no backup to put back.
	ErrNoBackup = fmt.Errorf("%w: no backup", ErrImport)
)

// ClientFile is one config file of a client.
type ClientFile struct {
	Client Client
	Path   string
	// Project, for Claude Code's ~/.claude.json, is the project directory whose servers (projects[Project].
	// mcpServers, Claude Code's local scope) are imported besides the user's; "" imports the user's alone.
	Project string
}

// ClientFiles lists where the clients keep their MCP servers, most used first, for a user on goos whose home
// directory is home, whose application data directory is appData (%APPDATA% on Windows; "" elsewhere) and who
// works in dir (the project files: .mcp.json, .cursor/mcp.json, .vscode/mcp.json, .gemini/settings.json). It
// computes paths only; which of them exist is the caller's to check.
func ClientFiles(goos, home, appData, dir string) []ClientFile {
	var desktop, code string
	switch goos {
	case "darwin":
		desktop = filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
		code = filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json")
	case "windows":
		desktop = filepath.Join(appData, "Claude", "claude_desktop_config.json")
		code = filepath.Join(appData, "Code", "User", "mcp.json")
	default:
		desktop = filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
		code = filepath.Join(home, ".config", "Code", "User", "mcp.json")
	}
	files := []ClientFile{
		{Client: ClientClaudeDesktop, Path: desktop},
		{Client: ClientClaudeCode, Path: filepath.Join(home, ".claude.json"), Project: dir},
	}
	if dir != "" {
		files = append(files, ClientFile{Client: ClientClaudeCode, Path: filepath.Join(dir, ".mcp.json")},
			ClientFile{Client: ClientCursor, Path: filepath.Join(dir, ".cursor", "mcp.json")})
	}
	files = append(files, ClientFile{Client: ClientCursor, Path: filepath.Join(home, ".cursor", "mcp.json")})
	if dir != "" {
		files = append(files, ClientFile{Client: ClientVSCode, Path: filepath.Join(dir, ".vscode", "mcp.json")})
	}
	files = append(files, ClientFile{Client: ClientVSCode, Path: code},
		ClientFile{Client: ClientWindsurf, Path: filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")})
	if dir != "" {
		files = append(files, ClientFile{Client: ClientGemini, Path: filepath.Join(dir, ".gemini", "settings.json")})
	}
	return append(files, ClientFile{Client: ClientGemini, Path: filepath.Join(home, ".gemini", "settings.json")})
}

// DetectClient names the client of a config file from its name, then from its content (VS Code's "servers";
// "mcpServers" in a file of any other name reads as Claude Desktop's shape, which Cursor and most clients share).
func DetectClient(path string, data []byte) (Client, error) {
	slash := filepath.ToSlash(path)
	base := filepath.Base(path)
	switch {
	case base == "claude_desktop_config.json":
		return ClientClaudeDesktop, nil
	case base == ".claude.json" || base == ".mcp.json":
		return ClientClaudeCode, nil
	case strings.HasSuffix(slash, ".cursor/mcp.json"):
		return ClientCursor, nil
	case strings.HasSuffix(slash, ".vscode/mcp.json") || strings.HasSuffix(slash, "Code/User/mcp.json"):
		return ClientVSCode, nil
	case base == "mcp_config.json" && strings.Contains(slash, "windsurf"):
		return ClientWindsurf, nil
	case strings.HasSuffix(slash, ".gemini/settings.json"):
		return ClientGemini, nil
	}
	root, err := json5.Parse(data)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrUnknownClient, path, err)
	}
	switch {
	case root.Kind == json5.Object && root.Member("servers") != nil:
		return ClientVSCode, nil
	case root.Kind == json5.Object && root.Member("mcpServers") != nil:
		return ClientClaudeDesktop, nil
	}
	return "", fmt.Errorf("%w: %s has neither \"mcpServers\" nor \"servers\"; name the client with --from", ErrUnknownClient, path)
}

// Server is one server as it goes into the toolsearch config: the keys of an mcpServers entry that have the same
// meaning in toolsearch, in the order the config file writes them.
type Server struct {
	Name          string            `json:"-"`
	Type          string            `json:"type,omitempty"`
	Command       string            `json:"command,omitempty"`
	Args          []string          `json:"args,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	URL           string            `json:"url,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	Disabled      bool              `json:"disabled,omitempty"`
	DisabledTools []string          `json:"disabledTools,omitempty"`
	AutoApprove   []string          `json:"autoApprove,omitempty"`
}

// Plan is what importing one client file does: read it with ReadClientFile, show it, then Write it.
type Plan struct {
	File ClientFile
	// Servers move into the toolsearch config, in the file's order.
	Servers []Server
	// Kept are servers that stay in the client's file beside toolsearch, because toolsearch cannot serve them
	// (the SSE transport), each with the reason.
	Kept []string
	// NotCarried names every setting that does not go into the toolsearch config, with its key and why.
	NotCarried []string
	// Toolsearch is the name of the entry of the client's file that already starts `toolsearch mcp serve`
	// ("" when none), and ToolsearchConfig the --config it passes: an import after the first one merges into
	// that file instead of nesting toolsearch in itself.
	Toolsearch, ToolsearchConfig string

	data    []byte
	perm    os.FileMode
	targets []serversAt // the server objects Write rewrites, the first one gets the toolsearch entry
}

// serversAt is one object of servers in the client's file, and the raw text of the entries that stay in it.
type serversAt struct {
	path []string
	kept []keptEntry
}

type keptEntry struct {
	name string
	raw  json.RawMessage
}

// ReadClientFile reads a client's file and plans its import. A file that does not exist is an error wrapping
// fs.ErrNotExist; one without servers gives a Plan with none.
func ReadClientFile(ctx context.Context, cf ClientFile) (*Plan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(cf.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrImport, err)
	}
	info, err := os.Stat(cf.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrImport, err)
	}
	p, err := PlanImport(cf, data)
	if err != nil {
		return nil, err
	}
	p.perm = info.Mode().Perm()
	return p, nil
}

// PlanImport plans the import of a client file's content: which servers move, which settings do not, and
// whether toolsearch already serves the file. cf.Client "" is detected (DetectClient).
func PlanImport(cf ClientFile, data []byte) (*Plan, error) {
	if cf.Client == "" {
		c, err := DetectClient(cf.Path, data)
		if err != nil {
			return nil, err
		}
		cf.Client = c
	}
	if !slices.Contains(Clients(), cf.Client) {
		return nil, fmt.Errorf("%w: %q (known: %s)", ErrUnknownClient, cf.Client, clientNames())
	}
	root, err := json5.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrImport, cf.Path, err)
	}
	if root.Kind != json5.Object {
		return nil, fmt.Errorf("%w: %s is %s, not an object", ErrUnknownClient, cf.Path, root.Kind)
	}
	p := &Plan{File: cf, data: data, perm: 0o600}
	key := "mcpServers"
	if cf.Client == ClientVSCode {
		key = "servers"
	}
	p.targets = append(p.targets, serversAt{path: []string{key}})
	p.readServers(root, []string{key})
	if cf.Client == ClientClaudeCode && cf.Project != "" {
		if proj := root.Find([]string{"projects", cf.Project}); proj != nil && proj.Kind == json5.Object {
			path := []string{"projects", cf.Project, "mcpServers"}
			if m := proj.Member("mcpServers"); m != nil {
				p.targets = append(p.targets, serversAt{path: path})
				p.readServers(root, path)
			}
		}
	}
	return p, nil
}

func clientNames() string {
	var names []string
	for _, c := range Clients() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// readServers reads the servers object at path into the plan; a server a later object names again replaces the
// earlier one, as Claude Code's local scope wins over the user's.
func (p *Plan) readServers(root *json5.Value, path []string) {
	obj := root.Find(path)
	key := strings.Join(path, ".")
	if obj == nil {
		return
	}
	if obj.Kind != json5.Object {
		p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s: not carried over (it is %s, not an object of servers)", key, obj.Kind))
		return
	}
	target := &p.targets[len(p.targets)-1]
	for _, m := range obj.Members {
		name := m.Key
		at := key + "." + name
		if m.Value.Kind != json5.Object {
			p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s: not carried over (a server is an object, this is %s)", at, m.Value.Kind))
			continue
		}
		entry, _ := m.Value.Interface().(map[string]any)
		if cfgPath, ok := selfEntry(entry); ok {
			p.Toolsearch, p.ToolsearchConfig = name, cfgPath
			continue
		}
		s, keep := p.server(name, at, entry)
		if keep != "" {
			target.kept = append(target.kept, keptEntry{name, m.Value.JSON()})
			p.Kept = append(p.Kept, fmt.Sprintf("%s: stays in %s (%s)", at, p.File.Client.Title(), keep))
			continue
		}
		if i := slices.IndexFunc(p.Servers, func(s Server) bool { return s.Name == name }); i >= 0 {
			p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s: replaces the server of the same name read before it, as %s does", at, p.File.Client.Title()))
			p.Servers = slices.Delete(p.Servers, i, i+1)
		}
		p.Servers = append(p.Servers, s)
	}
}

// selfEntry reports whether a server entry starts `toolsearch mcp serve`, and the --config it passes.
func selfEntry(entry map[string]any) (string, bool) {
	cmd, _ := entry["command"].(string)
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(cmd, `\`, "/")))
	if strings.TrimSuffix(base, ".exe") != "toolsearch" && !isRunningBinary(cmd) {
		return "", false
	}
	args, _ := entry["args"].([]any)
	var strs []string
	for _, a := range args {
		s, _ := a.(string)
		strs = append(strs, s)
	}
	if len(strs) < 2 || strs[0] != "mcp" || strs[1] != "serve" {
		return "", false
	}
	for i, a := range strs {
		if a == "--config" && i+1 < len(strs) {
			return strs[i+1], true
		}
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			return v, true
		}
	}
	return "", true
}

// isRunningBinary reports whether path is this very program, whatever the user named the binary: the entry a
// first import wrote names it by its absolute path, and it must be recognised on the next import too.
func isRunningBinary(path string) bool {
	self, err := os.Executable()
	if err != nil || !filepath.IsAbs(path) {
		return false
	}
	a, errA := os.Stat(self)
	b, errB := os.Stat(path)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

var vscodeInput = regexp.MustCompile(`\$\{input:([^}]*)\}`)

// server maps one client entry onto toolsearch's keys. keep is set, with the reason, for a server toolsearch
// cannot serve: it stays in the client's file.
func (p *Plan) server(name, at string, entry map[string]any) (s Server, keep string) {
	s.Name = name
	client := p.File.Client
	notCarried := func(key, why string) {
		p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s.%s: not carried over (%s)", at, key, why))
	}
	str := func(key string) string {
		v, ok := entry[key]
		if !ok {
			return ""
		}
		if s, ok := v.(string); ok {
			return s
		}
		notCarried(key, "not a string")
		return ""
	}
	strList := func(key string) []string {
		v, ok := entry[key]
		if !ok {
			return nil
		}
		arr, ok := v.([]any)
		if !ok {
			notCarried(key, "not an array")
			return nil
		}
		var out []string
		for _, e := range arr {
			switch e := e.(type) {
			case string:
				out = append(out, e)
			case json.Number, bool:
				out = append(out, fmt.Sprint(e))
			default:
				notCarried(key, "an element is not a string")
				return nil
			}
		}
		return out
	}
	strMap := func(key string) map[string]string {
		v, ok := entry[key]
		if !ok {
			return nil
		}
		obj, ok := v.(map[string]any)
		if !ok {
			notCarried(key, "not an object")
			return nil
		}
		out := map[string]string{}
		for k, e := range obj {
			switch e := e.(type) {
			case string:
				out[k] = e
			case json.Number, bool:
				out[k] = fmt.Sprint(e)
			default:
				notCarried(key+"."+k, "not a string")
			}
		}
		return out
	}

	handled := map[string]bool{}
	take := func(keys ...string) {
		for _, k := range keys {
			handled[k] = true
		}
	}
	take("command", "args", "env", "cwd", "url", "headers", "type", "disabled", "disabledTools", "autoApprove",
		"alwaysAllow", "excludeTools")
	s.Command, s.Args, s.Env, s.Cwd = str("command"), strList("args"), strMap("env"), str("cwd")
	s.URL, s.Headers = str("url"), strMap("headers")
	s.Disabled, _ = entry["disabled"].(bool)
	s.DisabledTools = append(strList("disabledTools"), strList("excludeTools")...)
	s.AutoApprove = append(strList("autoApprove"), strList("alwaysAllow")...)

	typ := strings.ToLower(str("type"))
	switch client {
	case ClientWindsurf:
		take("serverUrl")
		if u := str("serverUrl"); u != "" && s.URL == "" {
			s.URL = u
		}
	case ClientGemini:
		take("httpUrl", "trust", "includeTools")
		if u := str("httpUrl"); u != "" {
			s.URL, typ = u, "http"
		} else if s.URL != "" {
			typ = "sse" // Gemini CLI's "url" is an SSE endpoint; "httpUrl" is streamable HTTP
		}
		if trust, _ := entry["trust"].(bool); trust {
			s.AutoApprove = append(s.AutoApprove, "*")
		}
		if _, ok := entry["includeTools"]; ok {
			notCarried("includeTools", "toolsearch has no per-server allow list: list the other tools in disabledTools, "+
				"or add \"mcp:"+name+":<tool>\" entries to tools.allow, which also narrows every other server")
		}
	case ClientVSCode:
		take("envFile")
		if _, ok := entry["envFile"]; ok {
			notCarried("envFile", "toolsearch reads no env files: copy the variables the server needs into its env")
		}
	}
	switch typ {
	case "", "stdio":
		s.Type = ""
	case "http", "streamable-http", "streamablehttp":
		s.Type = "http"
	case "sse":
		return s, "it speaks the SSE transport, which toolsearch does not"
	default:
		notCarried("type", fmt.Sprintf("%q is no transport toolsearch knows", typ))
	}
	if s.Command == "" && s.URL == "" {
		return s, "it has neither a command nor a URL toolsearch could start"
	}
	s.Env = p.resolveVariables(at+".env", s.Env, true)
	s.Headers = p.resolveVariables(at+".headers", s.Headers, false)
	for i, a := range s.Args {
		s.Args[i] = p.resolveText(fmt.Sprintf("%s.args[%d]", at, i), a)
	}
	s.Cwd = p.resolveCwd(at+".cwd", p.resolveText(at+".cwd", s.Cwd))
	if client == ClientGemini {
		geminiVariables(s.Env)
		geminiVariables(s.Headers)
	}
	s.URL = p.resolveText(at+".url", s.URL)
	if len(s.Env) == 0 {
		s.Env = nil // {} and none mean the same
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
	if len(s.Args) == 0 {
		s.Args = nil
	}

	var rest []string
	for k := range entry {
		if !handled[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		why := "toolsearch has no such setting"
		switch k {
		case "timeout":
			why = "toolsearch has no per-call timeout; startTimeoutMs bounds a server's start"
		case "description", "name":
			why = "a description only"
		}
		notCarried(k, why)
	}
	return s, ""
}

// resolveVariables rewrites VS Code's ${env:NAME} (same meaning as toolsearch's ${NAME}) and ${input:id}, a
// value VS Code prompts for: toolsearch prompts for nothing, so an env entry reads ${KEY} from toolsearch's
// environment instead, and a header is left out. Both are named.
func (p *Plan) resolveVariables(at string, m map[string]string, env bool) map[string]string {
	for k, v := range m {
		if vscodeInput.MatchString(v) {
			if env {
				m[k] = "${" + k + "}"
				p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s.%s: %s is a value VS Code prompts for, not carried "+
					"over: it reads ${%s} from toolsearch's environment instead; set %s there", at, k, v, k, k))
				continue
			}
			delete(m, k)
			p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s.%s: not carried over (%s is a value VS Code prompts "+
				"for: write the header with ${NAME} and set NAME in toolsearch's environment)", at, k, v))
			continue
		}
		m[k] = p.resolveText(at+"."+k, v)
	}
	return m
}

// resolveText rewrites what the clients expand and toolsearch spells otherwise: ${env:NAME} (VS Code, Cursor,
// Windsurf) as ${NAME}, and ${workspaceFolder} (VS Code, Cursor) as the project directory of a project file.
// What cannot be resolved is named.
func (p *Plan) resolveText(at, v string) string {
	if !strings.Contains(v, "${") {
		return v
	}
	v = strings.ReplaceAll(v, "${env:", "${")
	if strings.Contains(v, "${workspaceFolder}") {
		if dir := p.projectDir(); dir != "" {
			v = strings.ReplaceAll(v, "${workspaceFolder}", dir)
		} else {
			p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s: ${workspaceFolder} has no value outside a workspace: "+
				"write the directory instead", at))
		}
	}
	if p.File.Client == ClientVSCode && vscodeInput.MatchString(v) {
		p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s: %s is a value VS Code prompts for: not carried over, "+
			"write it in the toolsearch config", at, v))
	}
	return v
}

// projectDir is the project a project-scope file belongs to (the directory holding .vscode, .cursor, .gemini
// or .mcp.json), or "" for a user-scope file.
func (p *Plan) projectDir() string {
	dir := filepath.Dir(p.File.Path)
	switch {
	case filepath.Base(p.File.Path) == ".mcp.json":
		return dir
	case slices.Contains([]string{".vscode", ".cursor", ".gemini"}, filepath.Base(dir)):
		if home, err := os.UserHomeDir(); err == nil && filepath.Dir(dir) == home {
			return "" // ~/.cursor/mcp.json and ~/.gemini/settings.json are the user's
		}
		return filepath.Dir(dir)
	}
	return ""
}

// resolveCwd makes a relative cwd absolute against the project of a project file, where the client starts the
// server; toolsearch would resolve it against its own working directory, which is not the user's in most
// clients.
func (p *Plan) resolveCwd(at, cwd string) string {
	if cwd == "" || filepath.IsAbs(cwd) || strings.HasPrefix(cwd, "~") || strings.HasPrefix(cwd, "$") {
		return cwd
	}
	if dir := p.projectDir(); dir != "" {
		return filepath.Join(dir, cwd)
	}
	p.NotCarried = append(p.NotCarried, fmt.Sprintf("%s: %q is relative to the directory %s starts the server in, "+
		"and toolsearch would resolve it against its own: write an absolute path", at, cwd, p.File.Client.Title()))
	return cwd
}

var bareVariable = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// geminiVariables rewrites Gemini CLI's $NAME in env and header values as ${NAME}, which toolsearch expands.
func geminiVariables(m map[string]string) {
	for k, v := range m {
		m[k] = bareVariable.ReplaceAllString(v, "$${${1}}")
	}
}

// WriteOptions says where Write puts the toolsearch config and how the client starts toolsearch.
type WriteOptions struct {
	// Config is the toolsearch config file to write. Empty means the --config of the toolsearch entry the
	// client's file already has; without one, Write fails.
	Config string
	// Executable is the absolute path of the toolsearch binary the client is to start (os.Executable). Required.
	Executable string
	// Force writes into a toolsearch config that exists although the client's file does not start toolsearch
	// with it: the servers are merged into it (an entry of the same name is replaced), its other settings kept.
	Force bool
}

// WriteResult says what Write did.
type WriteResult struct {
	// Config is the toolsearch config written; Added the servers added to it, Unchanged those it already had.
	Config           string
	Added, Unchanged []string
	// Backup is the copy of the client's original file (Undo puts it back); BackupKept says it existed already,
	// from an earlier import, and was left as it was.
	Backup     string
	BackupKept bool
	// Entry is the client's toolsearch entry.
	Entry Server
}

// Write carries the plan out: it writes the servers into the toolsearch config (a new file, or merged into the
// one the client already starts), keeps a backup of the client's file beside it (unless one exists from an
// earlier import), then rewrites the servers of the client's file so that the only one is toolsearch, with every
// other byte of the file as it was. Each file is replaced atomically (a temporary file renamed over it).
func (p *Plan) Write(ctx context.Context, opts *WriteOptions) (*WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var o WriteOptions
	if opts != nil {
		o = *opts
	}
	if o.Executable == "" || !filepath.IsAbs(o.Executable) {
		return nil, fmt.Errorf("%w: the toolsearch executable must be an absolute path (got %q)", ErrImport, o.Executable)
	}
	if o.Config == "" {
		o.Config = p.ToolsearchConfig
	}
	if o.Config == "" {
		return nil, fmt.Errorf("%w: name the toolsearch config to write", ErrImport)
	}
	out, err := filepath.Abs(o.Config)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrImport, err)
	}
	res := &WriteResult{Config: out, Backup: p.File.Path + BackupSuffix}
	cfgText, err := p.configText(out, o.Force, res)
	if err != nil {
		return nil, err
	}
	res.Entry = Server{Name: "toolsearch", Command: o.Executable, Args: []string{"mcp", "serve", "--config", out}}
	if p.File.Client == ClientVSCode {
		res.Entry.Type = "stdio"
	}
	if p.Toolsearch != "" {
		res.Entry.Name = p.Toolsearch
	}
	client, err := p.clientText(res.Entry)
	if err != nil {
		return nil, err
	}
	// A file kept in a dotfiles repository is a link: write the file it points to, and the link stays.
	clientPath := p.File.Path
	if resolved, err := filepath.EvalSymlinks(clientPath); err == nil {
		clientPath = resolved
	}
	if resolved, err := filepath.EvalSymlinks(out); err == nil {
		out = resolved
	}

	if _, err := os.Stat(res.Backup); err == nil {
		res.BackupKept = true
	} else if err := writeAtomic(res.Backup, p.data, p.perm); err != nil {
		return nil, err
	}
	if cfgText != nil {
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrImport, err)
		}
		if err := writeAtomic(out, cfgText, 0o600); err != nil {
			return nil, err
		}
	}
	if !bytes.Equal(client, p.data) {
		if err := writeAtomic(clientPath, client, p.perm); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// configText is the toolsearch config with the plan's servers: a new file, or the existing one with the new
// servers set in it (json5.Set, so its comments and layout stay). nil means nothing changes.
func (p *Plan) configText(out string, force bool, res *WriteResult) ([]byte, error) {
	existing, err := os.ReadFile(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		res.Added = serverNames(p.Servers)
		return newConfigText(p), nil
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrImport, err)
	}
	merging := force || (p.ToolsearchConfig != "" && sameFile(out, p.ToolsearchConfig))
	if !merging {
		return nil, fmt.Errorf("%w: %s; name another with --config, or merge the servers into it with --force", ErrTargetExists, out)
	}
	root, err := json5.Parse(existing)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrImport, out, err)
	}
	text := existing
	for _, s := range p.Servers {
		raw := marshal(s)
		if have := root.Find([]string{"mcpServers", s.Name}); have != nil {
			if jsonEqual(have.JSON(), raw) {
				res.Unchanged = append(res.Unchanged, s.Name)
				continue
			}
			if !force {
				return nil, fmt.Errorf("%w: %q in %s differs from %s's; rename one, or replace it with --force",
					ErrServerConflict, s.Name, out, p.File.Client.Title())
			}
		}
		if text, err = json5.Set(text, []string{"mcpServers", s.Name}, raw); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrImport, out, err)
		}
		res.Added = append(res.Added, s.Name)
	}
	if len(res.Added) == 0 {
		return nil, nil
	}
	return text, nil
}

// marshal is json.Marshal without HTML escaping: a config file says "<YOUR_TOKEN>", not "\u003cYOUR_TOKEN\u003e".
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the values are strings, lists and maps of strings
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

func serverNames(ss []Server) []string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return names
}

// newConfigText writes a new toolsearch config: a comment saying where it came from, then the servers.
func newConfigText(p *Plan) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// toolsearch config: the MCP servers imported from %s's %s.\n", p.File.Client.Title(), p.File.Path)
	fmt.Fprintf(&b, "// `toolsearch import --undo %s` puts that file back as it was; this file stays.\n", p.File.Path)
	b.WriteString("{\n  \"mcpServers\": {")
	for i, s := range p.Servers {
		if i > 0 {
			b.WriteString(",")
		}
		var entry bytes.Buffer
		_ = json.Indent(&entry, marshal(s), "    ", "  ")
		fmt.Fprintf(&b, "\n    %s: %s", marshal(s.Name), entry.Bytes())
	}
	if len(p.Servers) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes()
}

// clientText is the client's file with toolsearch as its only server: the first servers object becomes the
// toolsearch entry and the servers that stay, every other one only the servers that stay. The rest of the
// file is untouched, byte for byte; a file that was strict JSON stays strict JSON.
func (p *Plan) clientText(entry Server) ([]byte, error) {
	text := p.data
	for i, t := range p.targets {
		var b bytes.Buffer
		b.WriteString("{")
		n := 0
		add := func(name string, raw []byte) {
			if n > 0 {
				b.WriteString(",")
			}
			b.Write(marshal(name))
			b.WriteString(":")
			b.Write(raw)
			n++
		}
		if i == 0 {
			add(entry.Name, marshal(entry))
		}
		for _, k := range t.kept {
			add(k.name, k.raw)
		}
		b.WriteString("}")
		var err error
		if text, err = json5.Set(text, t.path, b.Bytes()); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrImport, p.File.Path, err)
		}
	}
	if json.Valid(p.data) && !json.Valid(text) {
		return nil, fmt.Errorf("%w: %s: the rewritten file would not be strict JSON", ErrImport, p.File.Path)
	}
	return text, nil
}

// Undo puts a client's file back from the backup an import kept beside it, and removes the backup. The
// toolsearch config the import wrote is left where it is.
func Undo(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	backup := path + BackupSuffix
	data, err := os.ReadFile(backup)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s does not exist: %s was not changed by toolsearch import", ErrNoBackup, backup, path)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrImport, err)
	}
	perm := os.FileMode(0o600)
	if info, err := os.Stat(backup); err == nil {
		perm = info.Mode().Perm()
	}
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	if err := writeAtomic(target, data, perm); err != nil {
		return err
	}
	if err := os.Remove(backup); err != nil {
		return fmt.Errorf("%w: %w", ErrImport, err)
	}
	return nil
}

// writeAtomic replaces path with data: a temporary file in the same directory, synced, then renamed over it, so
// that a client reading the file never sees half of it.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrImport, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %w", ErrImport, err)
	}
	return nil
}
