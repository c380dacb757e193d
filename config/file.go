package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolsearch/toolsearch/internal/filelock"
	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/runtime"
)

// PathEnv names the environment variable that overrides the default config file path.
const PathEnv = "TOOLSEARCH_CONFIG"

// DefaultPath is where the config file lives when no --config flag is given: $TOOLSEARCH_CONFIG, else
// $XDG_CONFIG_HOME/toolsearch/config.json, else ~/.config/toolsearch/config.json (the XDG default). getenv is
// os.Getenv in production and a map lookup in tests.
func DefaultPath(getenv func(string) string) (string, error) {
	if p := getenv(PathEnv); p != "" {
		return p, nil
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("no config path: set --config, $" + PathEnv + ", $XDG_CONFIG_HOME or $HOME")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "toolsearch", "config.json"), nil
}

// File is a config file in JSON5 (JSON plus comments, trailing commas, unquoted keys, single-quoted
// strings, hexadecimal numbers, Infinity and NaN: the format OpenClaw's own examples are written in), loaded for
// reading and for editing in place. Set changes the bytes of one value and nothing else, or adds a member in the
// file's own style; Save writes the file back. A File is not safe for concurrent use.
type File struct {
	path   string
	src    []byte
	root   *json5.Value
	exists bool
}

// LoadFile reads path. A missing file is not an error: it loads as an empty object, Exists reports false,
// and Save creates it. A command that only reads should treat a missing file as an error (see Exists).
func LoadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		f, _ := ParseFile(path, nil)
		f.exists = false
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return ParseFile(path, data)
}

// ParseFile parses data as the content of the config file at path. A file with nothing but white space
// and comments is an empty object.
func ParseFile(path string, data []byte) (*File, error) {
	if err := checkText(data); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	f := &File{path: path, exists: true, src: bytes.Clone(data)}
	if len(bytes.TrimSpace(data)) == 0 {
		f.src = []byte("{}\n")
	}
	root, err := json5.Parse(f.src)
	var syntax *json5.SyntaxError
	if errors.As(err, &syntax) && syntax.Offset == len(f.src) && onlyComments(f.src) {
		f.src = append(f.src, "\n{}\n"...)
		root, err = json5.Parse(f.src)
	}
	if err != nil {
		if hint := yamlHint(f.src); hint != "" {
			return nil, fmt.Errorf("config %s: %w; %s", path, err, hint)
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if root.Kind != json5.Object {
		return nil, fmt.Errorf("config %s: the top level must be an object", path)
	}
	f.root = root
	return f, nil
}

// checkText refuses what no text file holds: a NUL byte or bytes that are not UTF-8, naming the line and
// column (in bytes) of the first. JSON5 would accept a raw NUL inside a string or a comment, and invalid UTF-8
// in a comment, so a file damaged this way (or not a config file at all) would otherwise load in silence.
func checkText(data []byte) error {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == 0:
			return fmt.Errorf("line %d, column %d: a NUL byte: a config file is text (write \\u0000 to put one in a string)", line, col)
		case r == utf8.RuneError && n == 1:
			return fmt.Errorf("line %d, column %d: invalid UTF-8 (byte 0x%02x): a config file is UTF-8 text", line, col, data[i])
		case r == '\n':
			line, col = line+1, 0
		}
		i += n
		col += n
	}
	return nil
}

// onlyComments reports whether src holds comments and white space and nothing else.
func onlyComments(src []byte) bool {
	_, err := json5.Parse(append(bytes.Clone(src), "\nnull"...))
	return err == nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Exists reports whether the file existed when it was loaded (or has been saved since).
func (f *File) Exists() bool { return f.exists }

// Bytes is the file's content as Save would write it.
func (f *File) Bytes() []byte { return bytes.Clone(f.src) }

// Get returns the value at a dotted key ("tools.toolSearch.mode") as standard JSON, comments removed, Infinity
// and NaN written as null (as JavaScript's JSON.stringify does). ok is false when the key is not set.
func (f *File) Get(key string) (value json.RawMessage, ok bool, err error) {
	v, err := f.find(key)
	if v == nil || err != nil {
		return nil, false, err
	}
	return json.RawMessage(v.JSON()), true, nil
}

// Show returns the value at key as `toolsearch config get` prints it: indented JSON, comments removed, except
// that Infinity, -Infinity and NaN are written as the file spells them (JSON5), not as null. ok is false when
// the key is not set.
func (f *File) Show(key string) (text string, ok bool, err error) {
	v, err := f.find(key)
	if v == nil || err != nil {
		return "", false, err
	}
	return string(v.Indent()), true, nil
}

// find returns the value at key, or nil.
func (f *File) find(key string) (*json5.Value, error) {
	path, err := SplitKey(key)
	if err != nil {
		return nil, err
	}
	return f.root.Find(path), nil
}

// ToolSearch resolves tools.toolSearch with runtime.ParseConfig.
func (f *File) ToolSearch() (runtime.Config, error) {
	return runtime.ParseConfig(f.rawAt(runtime.ToolSearchKey))
}

// CheckToolSearch resolves tools.toolSearch with runtime.CheckConfig: unknown keys and modes are errors too, and every
// clamped value has a warning.
func (f *File) CheckToolSearch() (runtime.Config, []string, error) {
	return runtime.CheckConfig(f.rawAt(runtime.ToolSearchKey))
}

// rawAt returns the JSON5 text of the value at key (nil when unset), so that what JSON cannot spell (Infinity)
// reaches runtime.ParseConfig as written.
func (f *File) rawAt(key string) json.RawMessage {
	v, _ := f.find(key)
	if v == nil {
		return nil
	}
	return json.RawMessage(f.src[v.Start:v.End])
}

// Set sets the value at a dotted key, creating the objects on its path; value is JSON or JSON5. When the edit
// touches tools.toolSearch, the result must pass runtime.CheckConfig; otherwise nothing changes and the error says why.
// The warnings name every value the runtime will clamp, and what to. Setting a key below tools.toolSearch while
// it is true or false turns it into {enabled: <it>, ...}, so the edit does not silently switch Tool Search on
// or off.
func (f *File) Set(key string, value json.RawMessage) (warnings []string, err error) {
	path, err := SplitKey(key)
	if err != nil {
		return nil, err
	}
	if _, err := json5.Parse(value); err != nil {
		return nil, fmt.Errorf("config: the value for %s is not valid JSON5: %w", key, err)
	}
	src := f.src
	if ts := f.root.Find(toolSearchPath); ts != nil && ts.Kind == json5.Bool &&
		len(path) > len(toolSearchPath) && touches(path, toolSearchPath) {
		if src, err = json5.Set(src, toolSearchPath, []byte(fmt.Sprintf("{enabled: %t}", ts.Bool))); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	src, err = json5.Set(src, path, value)
	var pathErr *json5.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("config: cannot set %s: %w", key, err)
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	next, err := ParseFile(f.path, src)
	if err != nil {
		return nil, err // an edit never makes a file unreadable; this is a bug if it happens
	}
	if touches(path, toolSearchPath) {
		if _, warnings, err = next.CheckToolSearch(); err != nil {
			return nil, err
		}
	}
	f.src, f.root = next.src, next.root
	return warnings, nil
}

// Save writes the file atomically (a temporary file renamed over it), creating its directory. A symbolic link
// (a config kept in a dotfiles repository) is written through to its target and stays a link. A new file is
// private to the user, since config files tend to collect API keys; an existing one keeps its permissions.
// Save takes no lock: to edit a file that other processes may edit too, use UpdateFile.
func (f *File) Save() error {
	target, err := filelock.ResolveLink(f.path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := filelock.WriteAtomic(f.path, f.src, 0o600); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	f.exists = true
	return nil
}

// ErrLocked is wrapped by UpdateFile when another process held the config file's lock for longer
// than a few seconds, or for as long as ctx allowed.
var ErrLocked = errors.New("config file locked by another process")

// UpdateFile edits the config file at path under a lock (a lock file beside the file's target, as the
// pin file has): it loads the file once the lock is held, calls edit, and saves the result when edit returns
// nil, so edits made at the same time by several processes are applied one after the other and none is lost.
// Waiting for the lock is bounded by ctx and a few seconds. An error from edit leaves the file untouched and is
// returned as it is.
func UpdateFile(ctx context.Context, path string, edit func(*File) error) error {
	target, err := filelock.ResolveLink(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(dir, "."+filepath.Base(target)+".lock"), lockTimeout)
	if errors.Is(err, filelock.ErrBusy) {
		if ctx.Err() != nil {
			return fmt.Errorf("config %s: %w (%w)", path, ErrLocked, ctx.Err())
		}
		return fmt.Errorf("config %s: %w", path, ErrLocked)
	}
	if err != nil {
		return fmt.Errorf("config %s: lock: %w", path, err)
	}
	defer unlock()
	f, err := LoadFile(path)
	if err != nil {
		return err
	}
	if err := edit(f); err != nil {
		return err
	}
	return f.Save()
}

// touches reports whether editing the value at key can change the value at other: one is the other or
// contains it.
func touches(key, other []string) bool {
	n := min(len(key), len(other))
	return slices.Equal(key[:n], other[:n])
}

// toolSearchPath is runtime.ToolSearchKey as a path.
var toolSearchPath = []string{"tools", "toolSearch"}

// SplitKey splits a key path into its keys. Keys are separated by dots ("tools.toolSearch.mode"); a key
// that holds a dot, a bracket or nothing at all is written in brackets as a quoted string, JSON-style, with
// backslash escapes: mcpServers["my.server"].command (single quotes work too, for the shell's sake:
// mcpServers['my.server'].command).
func SplitKey(key string) ([]string, error) {
	if key == "" {
		return nil, errors.New("config: empty key")
	}
	bad := func(why string) error { return fmt.Errorf("config: bad key %q: %s", key, why) }
	var path []string
	for i := 0; i < len(key); {
		switch {
		case key[i] == '[':
			seg, n, err := quotedKey(key[i+1:])
			if err != nil {
				return nil, bad(err.Error())
			}
			i += 1 + n
			if i >= len(key) || key[i] != ']' {
				return nil, bad(`a quoted key must end with "]"`)
			}
			i++
			path = append(path, seg)
		case key[i] == ']':
			return nil, bad(`"]" without "[": write a key with brackets as ["a[b]"]`)
		default:
			j := i
			for j < len(key) && key[j] != '.' && key[j] != '[' && key[j] != ']' {
				j++
			}
			if j == i {
				return nil, bad(`empty segment (a key with a dot in it is written ["my.server"])`)
			}
			path = append(path, key[i:j])
			i = j
		}
		if i < len(key) {
			switch key[i] {
			case '.':
				i++
				if i == len(key) {
					return nil, bad("it ends with a dot")
				}
			case '[':
			case ']':
				return nil, bad(`"]" without "[": write a key with brackets as ["a[b]"]`)
			default:
				return nil, bad(fmt.Sprintf("unexpected %q after a quoted key (want \".\" or \"[\")", key[i]))
			}
		}
	}
	return path, nil
}

// quotedKey reads a quoted key at the start of s (a JSON string, or the same in single quotes) and returns it
// with the number of bytes it took.
func quotedKey(s string) (string, int, error) {
	if s == "" || (s[0] != '"' && s[0] != '\'') {
		return "", 0, errors.New(`"[" must be followed by a quoted key, as in mcpServers["my.server"]`)
	}
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			v, err := json5.Parse([]byte(s[:i+1]))
			if err != nil || v.Kind != json5.String {
				return "", 0, fmt.Errorf("bad quoted key %s", s[:i+1])
			}
			return v.Str, i + 1, nil
		}
	}
	return "", 0, errors.New("unterminated quoted key")
}

// FormatKey writes a path as SplitKey reads it: plain keys joined by dots, and any key that a dot
// would not survive in brackets and quotes (mcpServers["my.server"]).
func FormatKey(path ...string) string {
	var b strings.Builder
	for i, seg := range path {
		if seg == "" || strings.ContainsAny(seg, ".[]\"'") {
			b.WriteString("[" + json5.Quote(seg, '"') + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// lockTimeout bounds the wait for the lock of a config file: long enough for another process to finish
// a read-merge-write (milliseconds), short enough that a lock held by a stuck process fails the call, not the
// session. The caller's context can end the wait sooner. A variable so tests can trip it quickly.
var lockTimeout = 3 * time.Second
