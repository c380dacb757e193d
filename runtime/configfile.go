package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// ToolSearchKey is the config key of Tool Search, in the dotted form `toolsearch config` takes.
const ToolSearchKey = "tools.toolSearch"

// ConfigPathEnv names the environment variable that overrides the default config file path.
const ConfigPathEnv = "TOOLSEARCH_CONFIG"

// DefaultConfigPath is where the config file lives when no --config flag is given: $TOOLSEARCH_CONFIG, else
// $XDG_CONFIG_HOME/toolsearch/config.json, else ~/.config/toolsearch/config.json (the XDG default). getenv is
// os.Getenv in production and a map lookup in tests.
func DefaultConfigPath(getenv func(string) string) (string, error) {
	if p := getenv(ConfigPathEnv); p != "" {
		return p, nil
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("no config path: set --config, $" + ConfigPathEnv + ", $XDG_CONFIG_HOME or $HOME")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "toolsearch", "config.json"), nil
}

// ConfigFile is a config file in JSON with comments and trailing commas (JWCC, parsed with hujson), loaded for
// reading and for editing in place: Set changes one value and Save writes the file back with every comment and,
// as far as possible, the layout it had. A ConfigFile is not safe for concurrent use.
type ConfigFile struct {
	path      string
	value     hujson.Value
	exists    bool
	canonical bool // the file was already laid out as hujson.Format lays it out, so formatting after edits is safe
}

// LoadConfigFile reads path. A missing file is not an error: it loads as an empty object and Save creates it.
func LoadConfigFile(path string) (*ConfigFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		f, _ := ParseConfigFile(path, nil)
		f.exists = false
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return ParseConfigFile(path, data)
}

// ParseConfigFile parses data as the content of the config file at path. Empty data is an empty object.
func ParseConfigFile(path string, data []byte) (*ConfigFile, error) {
	f := &ConfigFile{path: path, exists: true}
	if len(bytes.TrimSpace(data)) == 0 {
		f.value, _ = hujson.Parse([]byte("{}"))
		f.canonical = true
		return f, nil
	}
	// hujson's syntax tree aliases its input and Format edits in place, so each parse gets its own copy.
	v, err := hujson.Parse(bytes.Clone(data))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("config %s: the top level must be an object", path)
	}
	formatted, err := hujson.Format(bytes.Clone(data))
	f.canonical = err == nil && bytes.Equal(bytes.TrimSpace(formatted), bytes.TrimSpace(data))
	f.value = v
	return f, nil
}

// Path is the file's path.
func (f *ConfigFile) Path() string { return f.path }

// Exists reports whether the file existed when it was loaded (or has been saved since).
func (f *ConfigFile) Exists() bool { return f.exists }

// Bytes is the file's content as Save would write it.
func (f *ConfigFile) Bytes() []byte { return f.value.Pack() }

// Get returns the value at a dotted key ("tools.toolSearch.mode") as standard JSON, comments removed. ok is
// false when the key is not set.
func (f *ConfigFile) Get(key string) (value json.RawMessage, ok bool, err error) {
	ptr, err := pointer(key)
	if err != nil {
		return nil, false, err
	}
	found := f.value.Find(ptr)
	if found == nil {
		return nil, false, nil
	}
	v := found.Clone()
	v.Standardize()
	v.BeforeExtra, v.AfterExtra = nil, nil
	return json.RawMessage(bytes.TrimSpace(v.Pack())), true, nil
}

// ToolSearch resolves tools.toolSearch with ParseConfig.
func (f *ConfigFile) ToolSearch() (Config, error) {
	raw, _, err := f.Get(ToolSearchKey)
	if err != nil {
		return DefaultConfig(), err
	}
	return ParseConfig(raw)
}

// Set sets the value at a dotted key, creating the objects on its path. value is standard JSON. When the edit
// touches tools.toolSearch, the result must pass CheckConfig; otherwise nothing changes and the error says why.
// The warnings name every value the runtime will clamp, and what to. Setting a key below tools.toolSearch while
// it is true or false turns it into {"enabled": <it>, ...}, so the edit does not silently switch Tool Search on
// or off.
func (f *ConfigFile) Set(key string, value json.RawMessage) (warnings []string, err error) {
	if err := f.set(key, value, &warnings); err != nil {
		return nil, err
	}
	return warnings, nil
}

func (f *ConfigFile) set(key string, value json.RawMessage, warnings *[]string) error {
	if _, err := pointer(key); err != nil {
		return err
	}
	if !json.Valid(value) {
		return fmt.Errorf("config: the value for %s is not valid JSON", key)
	}
	// Clone drops the empty markers hujson uses for trailing commas; a reparse keeps them.
	next, err := hujson.Parse(f.value.Pack())
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	parts := strings.Split(key, ".")
	for i := 1; i < len(parts); i++ {
		if err := ensureObject(&next, parts[:i]); err != nil {
			return err
		}
	}
	if err := setMember(&next, parts, value); err != nil {
		return err
	}
	if touches(key, ToolSearchKey) {
		probe := &ConfigFile{value: next}
		raw, _, _ := probe.Get(ToolSearchKey)
		_, w, err := CheckConfig(raw)
		if err != nil {
			return err
		}
		*warnings = w
	}
	if f.canonical {
		next.Format()
	}
	f.value = next
	return nil
}

// Save writes the file atomically (a temporary file renamed over it), creating its directory. A new file is
// private to the user, since config files tend to collect API keys; an existing one keeps its permissions.
func (f *ConfigFile) Save() error {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	perm := fs.FileMode(0o600)
	if st, err := os.Stat(f.path); err == nil {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, ".config-*.tmp")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer os.Remove(tmp.Name())
	data := f.Bytes()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("config: %w", err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	f.exists = true
	return nil
}

// touches reports whether editing key can change the value at other: one is the other or contains it.
func touches(key, other string) bool {
	return key == other || strings.HasPrefix(other, key+".") || strings.HasPrefix(key, other+".")
}

// pointer turns a dotted key into a JSON Pointer (RFC 6901).
func pointer(key string) (string, error) {
	if key == "" {
		return "", errors.New("config: empty key")
	}
	var b strings.Builder
	for _, part := range strings.Split(key, ".") {
		if part == "" {
			return "", fmt.Errorf("config: bad key %q: empty segment", key)
		}
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(part))
	}
	return b.String(), nil
}

// ensureObject makes the value at path an object, creating it if missing. Only tools.toolSearch may be
// converted from a boolean; any other non-object on the path is an error rather than a silent overwrite.
func ensureObject(root *hujson.Value, path []string) error {
	ptr, _ := pointer(strings.Join(path, "."))
	v := root.Find(ptr)
	if v == nil {
		return setMember(root, path, json.RawMessage("{}"))
	}
	switch t := v.Value.(type) {
	case *hujson.Object:
		return nil
	case hujson.Literal:
		if strings.Join(path, ".") == ToolSearchKey && (t.Kind() == 't' || t.Kind() == 'f') {
			enabled, _ := json.Marshal(map[string]bool{"enabled": t.Bool()})
			return setMember(root, path, enabled)
		}
		return fmt.Errorf("config: cannot set below %s: it is %s, not an object", strings.Join(path, "."), t)
	}
	return fmt.Errorf("config: cannot set below %s: it is not an object", strings.Join(path, "."))
}

// setMember sets path to value inside its parent object, which must exist. hujson's JSON Patch keeps every
// comment where it belongs; a new member is then indented like its siblings and keeps a trailing comma if they
// had one, so a hand-formatted file stays readable.
func setMember(root *hujson.Value, path []string, value json.RawMessage) error {
	parentKey := strings.Join(path[:len(path)-1], ".")
	parent := root
	if parentKey != "" {
		ptr, _ := pointer(parentKey)
		parent = root.Find(ptr)
	}
	if parent == nil {
		return fmt.Errorf("config: %s does not exist", parentKey)
	}
	obj, ok := parent.Value.(*hujson.Object)
	if !ok {
		return fmt.Errorf("config: %s is not an object", parentKey)
	}
	before := len(obj.Members)
	trailing := before > 0 && obj.Members[before-1].Value.AfterExtra != nil
	nv, err := hujson.Parse(bytes.Clone(value))
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	nv.Format() // {"mode": "tools"} rather than {"mode":"tools"}, like the rest of a formatted file
	ptr, _ := pointer(strings.Join(path, "."))
	patch, err := json.Marshal([]struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}{{"add", ptr, bytes.TrimSpace(nv.Pack())}})
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := root.Patch(patch); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if len(obj.Members) == before {
		return nil // replaced in place
	}
	added := &obj.Members[before]
	if before == 0 {
		added.Value.BeforeExtra = hujson.Extra(" ")
		return nil
	}
	prev := &obj.Members[before-1]
	if indent, ok := indentOf(prev.Name.BeforeExtra); ok {
		extra := added.Name.BeforeExtra
		if i := bytes.LastIndexByte(extra, '\n'); i >= 0 && len(bytes.TrimSpace(extra[i:])) == 0 {
			extra = extra[:i]
		}
		added.Name.BeforeExtra = append(append(hujson.Extra(nil), extra...), indent...)
	} else if len(added.Name.BeforeExtra) == 0 {
		added.Name.BeforeExtra = hujson.Extra(" ")
	}
	if len(bytes.TrimSpace(prev.Value.BeforeExtra)) == 0 {
		added.Value.BeforeExtra = append(hujson.Extra(nil), prev.Value.BeforeExtra...)
	}
	if trailing && added.Value.AfterExtra == nil {
		added.Value.AfterExtra = hujson.Extra{}
	}
	return nil
}

// indentOf returns the line break and indentation that precede a member, without any comment before them.
func indentOf(extra hujson.Extra) ([]byte, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 || len(bytes.TrimSpace(extra[i:])) > 0 {
		return nil, false
	}
	return append([]byte(nil), extra[i:]...), true
}
