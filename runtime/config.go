package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/internal/suggest"
)

// ToolSearchKey is the config key of Tool Search, in the dotted form `toolsearch config` takes.
const ToolSearchKey = "tools.toolSearch"

// Mode is what the model sees of a large catalog.
type Mode string

// The modes of tools.toolSearch.
const (
	// ModeCode exposes tool_search_code: the model writes JavaScript against openclaw.tools in the sandbox.
	ModeCode Mode = "code"
	// ModeTools exposes tool_search, tool_describe and tool_call.
	ModeTools Mode = "tools"
	// ModeDirectory exposes the three structured tools plus a bounded directory in the system prompt and a few
	// likely tool schemas.
	ModeDirectory Mode = "directory"
	// ModeOff exposes every allowed tool directly: Tool Search is not applied.
	ModeOff Mode = "off"
)

// Defaults and bounds of Config. The search and timeout bounds are OpenClaw's; the sandbox limits are ours.
const (
	DefaultCodeTimeoutMs      = 10_000
	MinCodeTimeoutMs          = 1_000
	MaxCodeTimeoutMs          = 60_000
	DefaultMaxSearchLimit     = 20
	MaxMaxSearchLimit         = 50
	DefaultSearchDefaultLimit = 8

	DefaultCodeFuel           uint64 = 2_000_000_000
	MinCodeFuel               uint64 = 1_000_000
	MaxCodeFuel               uint64 = 100_000_000_000
	DefaultCodeMemoryBytes    uint64 = 64 << 20
	MinCodeMemoryBytes        uint64 = 16 << 20
	MaxCodeMemoryBytes        uint64 = 1 << 30
	DefaultCodeMaxOutputBytes        = 64 << 10
	MinCodeMaxOutputBytes            = 1 << 10
	MaxCodeMaxOutputBytes            = 16 << 20
	DefaultCodeMaxCalls              = 100
	MaxCodeMaxCalls                  = 1_000

	// What one call result sends back to the model: about 25,000 tokens by default, the most agents give a
	// single tool result; a longer result keeps its head and tail around a marker saying how much was cut.
	DefaultMaxResultBytes = 100_000
	MinMaxResultBytes     = 1 << 10
	MaxMaxResultBytes     = 16 << 20
	// An approval waits for a person: minutes, not the seconds a script may run.
	DefaultApprovalTimeoutMs = 300_000
	MinApprovalTimeoutMs     = 1_000
	MaxApprovalTimeoutMs     = 3_600_000
)

// Config is the resolved value of tools.toolSearch: every field holds its effective value after defaults and
// clamps. Mode is ModeOff exactly when Enabled is false.
//
// A Config built in Go rather than by ParseConfig may leave fields zero: New resolves zero fields to their
// defaults, an empty Mode to ModeCode, and clamps the rest the same way ParseConfig does.
//
// Every field is a key of tools.toolSearch (its json tag) and has an entry in ConfigKeys, which gives its type,
// default, range and meaning; parsing, clamping, `toolsearch config set` and the README's key table all read
// that entry, so a new key is a new field plus one entry (TestConfigKeysDescribeEveryField enforces it).
type Config struct {
	// Enabled turns Tool Search on. Off (false, the zero value) means every tool is shown to the model
	// directly, as ModeOff; in Go, set it with Mode, since a Config with Mode set and Enabled false is off.
	Enabled bool `json:"enabled"`
	// Mode is what the model sees when Enabled: ModeCode (the default, also for ""), ModeTools or
	// ModeDirectory. ModeOff turns Tool Search off whatever Enabled says.
	Mode Mode `json:"mode"`
	// CodeTimeoutMs is the wall-clock limit of one tool_search_code run in milliseconds, the tool calls it
	// waits for included and approvals excluded (DefaultCodeTimeoutMs, MinCodeTimeoutMs–MaxCodeTimeoutMs).
	CodeTimeoutMs int `json:"codeTimeoutMs"`
	// SearchDefaultLimit is how many hits a search returns when it asks for no limit (DefaultSearchDefaultLimit,
	// at most MaxSearchLimit).
	SearchDefaultLimit int `json:"searchDefaultLimit"`
	// MaxSearchLimit is the most hits one search returns; a larger limit asked for is capped
	// (DefaultMaxSearchLimit, at most MaxMaxSearchLimit).
	MaxSearchLimit int `json:"maxSearchLimit"`
	// CodeFuel is the CPU budget of one tool_search_code run, counted in interpreter steps (function entries
	// and loop iterations), so the same script gets the same budget on every machine (DefaultCodeFuel,
	// MinCodeFuel–MaxCodeFuel).
	CodeFuel uint64 `json:"codeFuel"`
	// CodeMemoryBytes bounds the memory of one run, ArrayBuffers included (DefaultCodeMemoryBytes,
	// MinCodeMemoryBytes–MaxCodeMemoryBytes).
	CodeMemoryBytes uint64 `json:"codeMemoryBytes"`
	// CodeMaxOutputBytes bounds the console output of one run; more fails the run (DefaultCodeMaxOutputBytes,
	// MinCodeMaxOutputBytes–MaxCodeMaxOutputBytes).
	CodeMaxOutputBytes int `json:"codeMaxOutputBytes"`
	// CodeMaxCalls bounds the searches, describes and calls one run may make (DefaultCodeMaxCalls, at most
	// MaxCodeMaxCalls).
	CodeMaxCalls int `json:"codeMaxCalls"`
	// MaxResultBytes bounds the text of every call result the model is sent (control tools, including the
	// value tool_search_code returns, and tools called directly); the full result stays in Details.
	MaxResultBytes int `json:"maxResultBytes"`
	// ApprovalTimeoutMs is how long one call waits for its Approver before it is blocked, in milliseconds
	// (DefaultApprovalTimeoutMs, MinApprovalTimeoutMs–MaxApprovalTimeoutMs); a suspended script's clock stops
	// meanwhile.
	ApprovalTimeoutMs int `json:"approvalTimeoutMs"`
	// PinFile, when set, turns on pinned tool definitions kept in this file ("~/" is the home directory): see
	// OpenPinFile. Options.Pins, when set, takes its place.
	PinFile string `json:"pinFile,omitempty"`
	// Visible are selectors, as in tools.allow (names, ids, globs, server:, source:, group:, annotation:), of
	// tools kept in the model's tool list beside the control tools in code, tools and directory mode; they stay
	// searchable, and calls to them go through the same pipeline. At most MaxVisibleTools tools, whose
	// definitions take at most MaxDirectoryBytes, may be selected (see VisibleLimitError).
	Visible []string `json:"visible,omitempty"`
}

// ConfigType is the kind of value a key of tools.toolSearch takes.
type ConfigType string

const (
	ConfigBoolean   ConfigType = "boolean"            // true or false
	ConfigEnum      ConfigType = "string"             // one of ConfigKey.Values
	ConfigInteger   ConfigType = "integer"            // a positive integer, clamped to its range
	ConfigPath      ConfigType = "path"               // a file path ("~/" is the home directory); empty means unset
	ConfigSelectors ConfigType = "array of selectors" // tool selectors, as in tools.allow; empty means none
)

// ConfigKey describes one key of tools.toolSearch.
type ConfigKey struct {
	// Name is the key, which is also the json tag of its Config field.
	Name string
	// Type is the kind of value the key takes.
	Type ConfigType
	// Values are the accepted strings of a ConfigEnum key, its default first.
	Values []string
	// Default, Min and Max are the default and the clamp range of a ConfigInteger key (a boolean's Default is
	// 0 for false). A value outside the range is not refused: it is clamped, and CheckConfig warns about it.
	Default, Min, Max uint64
	// MaxKey, when set, names the key whose resolved value is the upper bound instead of Max.
	MaxKey string
	// Unit is what one unit of an integer is ("ms", "bytes"), for messages and documentation.
	Unit string
	// Doc says what the key does.
	Doc string
}

// ConfigKeys describes every key of tools.toolSearch, in documentation order. It returns a new slice each time.
func ConfigKeys() []ConfigKey {
	return []ConfigKey{
		{Name: "enabled", Type: ConfigBoolean, Doc: "Turns Tool Search on or off. When it is not set, setting " +
			"any other key turns Tool Search on; `tools.toolSearch: true` is `{enabled: true}`."},
		{Name: "mode", Type: ConfigEnum, Values: []string{string(ModeCode), string(ModeTools), string(ModeDirectory),
			string(ModeOff)}, Doc: "What the model sees: `code` is one `tool_search_code` tool that runs JavaScript; " +
			"`tools` is `tool_search`, `tool_describe` and `tool_call`; `directory` adds a list of trusted tools " +
			"to the system prompt; `off` exposes every tool directly."},
		{Name: "codeTimeoutMs", Type: ConfigInteger, Default: DefaultCodeTimeoutMs, Min: MinCodeTimeoutMs,
			Max: MaxCodeTimeoutMs, Unit: "ms", Doc: "Wall-clock limit of one `tool_search_code` run, " +
				"including the tool calls it waits for; time spent waiting for an approval does not count."},
		{Name: "searchDefaultLimit", Type: ConfigInteger, Default: DefaultSearchDefaultLimit, Min: 1,
			MaxKey: "maxSearchLimit", Unit: "hits", Doc: "Hits a search returns when it asks for no limit."},
		{Name: "maxSearchLimit", Type: ConfigInteger, Default: DefaultMaxSearchLimit, Min: 1,
			Max: MaxMaxSearchLimit, Unit: "hits", Doc: "The most hits one search returns; a larger limit is capped."},
		{Name: "codeFuel", Type: ConfigInteger, Default: DefaultCodeFuel, Min: MinCodeFuel, Max: MaxCodeFuel,
			Unit: "fuel units", Doc: "CPU budget of one run: one unit per loop iteration of the interpreter and " +
				"per call where every recursion passes (a few functions and the calls through function pointers), " +
				"the same count on every run of the same script."},
		{Name: "codeMemoryBytes", Type: ConfigInteger, Default: DefaultCodeMemoryBytes, Min: MinCodeMemoryBytes,
			Max: MaxCodeMemoryBytes, Unit: "bytes", Doc: "Memory of one run, ArrayBuffers included."},
		{Name: "codeMaxOutputBytes", Type: ConfigInteger, Default: DefaultCodeMaxOutputBytes,
			Min: MinCodeMaxOutputBytes, Max: MaxCodeMaxOutputBytes, Unit: "bytes",
			Doc: "Console output one run may write; more fails the run."},
		{Name: "codeMaxCalls", Type: ConfigInteger, Default: DefaultCodeMaxCalls, Min: 1, Max: MaxCodeMaxCalls,
			Unit: "calls", Doc: "Searches, describes and calls one run may make."},
		{Name: "maxResultBytes", Type: ConfigInteger, Default: DefaultMaxResultBytes, Min: MinMaxResultBytes,
			Max: MaxMaxResultBytes, Unit: "bytes", Doc: "The most text one call result sends to the model, in every " +
				"mode (what `tool_search_code` returns included); a longer result keeps its start and end around a " +
				"note saying how much was cut. `mcp serve` in off mode is a proxy: it passes upstream results on " +
				"unchanged, for its MCP client to bound."},
		{Name: "approvalTimeoutMs", Type: ConfigInteger, Default: DefaultApprovalTimeoutMs, Min: MinApprovalTimeoutMs,
			Max: MaxApprovalTimeoutMs, Unit: "ms", Doc: "How long one call may wait for its approver; an approval " +
				"that does not come in time blocks the call. In code mode the script is suspended meanwhile, its " +
				"codeTimeoutMs clock stopped."},
		{Name: "pinFile", Type: ConfigPath, Doc: "Turns on pinned tool definitions: the definition of each tool " +
			"is fingerprinted in this file when it is first approved or called, and calls to a tool whose " +
			"definition changed since are blocked until it is approved again."},
		{Name: "visible", Type: ConfigSelectors, Max: MaxVisibleTools, Doc: "Tools kept in the model's tool " +
			"list beside the search tools in code, tools and directory mode, for the few the model uses on every " +
			"turn: selectors as in `tools.allow` (`\"mcp:memory:read_graph\"`, `\"server:git\"`). They stay " +
			"searchable, and every call goes through the same policy, approval and pins. At most " +
			strconv.Itoa(MaxVisibleTools) + " tools, whose definitions take at most " + strconv.Itoa(MaxDirectoryBytes) +
			" bytes; a server's `visible` adds its own."},
	}
}

// ConfigKeyNames returns the names of ConfigKeys, in the same order.
func ConfigKeyNames() []string {
	keys := ConfigKeys()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return names
}

// LookupConfigKey returns the key called name.
func LookupConfigKey(name string) (ConfigKey, bool) {
	for _, k := range ConfigKeys() {
		if k.Name == name {
			return k, true
		}
	}
	return ConfigKey{}, false
}

// Expected says what a valid value looks like, with an example: the fix a message about a wrong value offers.
func (k ConfigKey) Expected() string {
	switch k.Type {
	case ConfigBoolean:
		return "true or false"
	case ConfigEnum:
		return "one of " + strings.Join(k.Values, ", ")
	case ConfigPath:
		return `a file path, for example "~/.config/toolsearch/pins.json"`
	case ConfigSelectors:
		return fmt.Sprintf(`an array of at most %d tool selectors, for example ["mcp:memory:read_graph"]`, k.Max)
	}
	return fmt.Sprintf("a positive integer from %s to %s%s, for example %d", formatUint(k.Min), k.maxText(),
		k.unitSuffix(), k.Default)
}

func (k ConfigKey) maxText() string {
	if k.MaxKey != "" {
		return k.MaxKey
	}
	return formatUint(k.Max)
}

func (k ConfigKey) unitSuffix() string {
	if k.Unit == "" {
		return ""
	}
	return " (" + k.Unit + ")"
}

// DefaultText is the default value as a config file would spell it ("" when Tool Search decides, as for mode
// when Tool Search is off).
func (k ConfigKey) DefaultText() string {
	switch k.Type {
	case ConfigBoolean:
		return strconv.FormatBool(k.Default != 0)
	case ConfigEnum:
		return strconv.Quote(k.Values[0])
	case ConfigPath:
		return ""
	case ConfigSelectors:
		return "[]"
	}
	return strconv.FormatUint(k.Default, 10)
}

// RangeText is the accepted range or values, for documentation: "1000–60000", "1–maxSearchLimit".
func (k ConfigKey) RangeText() string {
	switch k.Type {
	case ConfigBoolean:
		return "true, false"
	case ConfigEnum:
		return strings.Join(k.Values, ", ")
	case ConfigPath:
		return "a path"
	case ConfigSelectors:
		return "at most " + formatUint(k.Max) + " selectors"
	}
	return formatUint(k.Min) + "–" + k.maxText()
}

func formatUint(n uint64) string { return strconv.FormatUint(n, 10) }

// DefaultConfig is what an unset tools.toolSearch resolves to: off, with every limit at its default.
func DefaultConfig() Config {
	return Config{}.resolved()
}

// ConfigError lists every value of tools.toolSearch that was refused. ParseConfig returns it next to a usable
// Config in which each refused value was replaced by its default, so a caller may log it and carry on, or fail.
type ConfigError struct {
	// Problems are the messages, one per refused value, each naming its key, what it takes and what it got.
	Problems []string
}

func (e *ConfigError) Error() string {
	return ToolSearchKey + ": " + strings.Join(e.Problems, "; ")
}

// ParseConfig resolves the value of tools.toolSearch, given as JSON or JSON5: true | false | an object of the
// keys ConfigKeys lists.
//
//   - empty input, null, false or {} → off;
//   - true → on in code mode;
//   - an object with any key but enabled → on, unless enabled is false;
//   - an unknown mode → code; "off" → off;
//   - integers must be positive (5.0 counts as 5, Infinity as "as large as allowed") and are then clamped to
//     their range: codeTimeoutMs 1000–60000 (10000), maxSearchLimit 1–50 (20), searchDefaultLimit
//     1..maxSearchLimit (8), and the sandbox limits (see ConfigKeys).
//
// Anything else (a string, an array, enabled that is not a boolean, a zero, negative, fractional, NaN or
// non-numeric limit) is a *ConfigError; the returned Config is still resolved, with defaults in place of the
// refused values. Unknown keys and modes are tolerated here (a newer config may add some); CheckConfig refuses
// them.
func ParseConfig(raw json.RawMessage) (Config, error) {
	c, chk := parseConfig(raw)
	if len(chk.problems) > 0 {
		return c, &ConfigError{Problems: chk.problems}
	}
	return c, nil
}

// CheckConfig is ParseConfig made strict for people editing a config: it also refuses unknown keys (naming the
// closest valid one) and unknown modes, and it returns a warning for every value it clamps, naming the value
// the runtime will use. `toolsearch config set` and every command that loads a config file use it, so a typo
// never passes silently.
func CheckConfig(raw json.RawMessage) (cfg Config, warnings []string, err error) {
	c, chk := parseConfig(raw)
	problems := append(chk.problems, chk.strict...)
	if len(problems) > 0 {
		return c, chk.warnings, &ConfigError{Problems: problems}
	}
	return c, chk.warnings, nil
}

// configCheck collects what parsing found: problems ParseConfig reports, the extra ones only CheckConfig
// reports, and clamp warnings.
type configCheck struct {
	problems, strict, warnings []string
}

func parseConfig(raw json.RawMessage) (Config, configCheck) {
	var chk configCheck
	v, err := decodeConfigValue(raw)
	if err != nil {
		chk.problems = append(chk.problems, err.Error())
		return DefaultConfig(), chk
	}
	switch v := v.(type) {
	case nil:
		return DefaultConfig(), chk
	case bool:
		return Config{Enabled: v}.resolved(), chk
	case map[string]any:
		return parseObject(v, &chk), chk
	}
	chk.problems = append(chk.problems, fmt.Sprintf(`must be true, false or an object such as {mode: "tools"} (got %s)`,
		describeJSON(v)))
	return DefaultConfig(), chk
}

func parseObject(obj map[string]any, chk *configCheck) Config {
	var c Config
	for k := range obj {
		if k != "enabled" {
			c.Enabled = true // configuring Tool Search means wanting it, unless enabled says otherwise
		}
	}
	integers := map[string]uint64{}
	for _, key := range ConfigKeys() {
		v, ok := obj[key.Name]
		if !ok {
			continue
		}
		field := configField(&c, key.Name)
		switch key.Type {
		case ConfigBoolean:
			b, isBool := v.(bool)
			if !isBool {
				chk.problems = append(chk.problems, wrongValue(key, v))
				continue
			}
			field.SetBool(b)
		case ConfigEnum:
			s, isString := v.(string)
			switch {
			case !isString:
				chk.problems = append(chk.problems, wrongValue(key, v))
			case !slices.Contains(key.Values, s):
				msg := wrongValue(key, v)
				if near := closest(s, key.Values); near != "" {
					msg += fmt.Sprintf("; did you mean %q?", near)
				}
				chk.strict = append(chk.strict, msg)
			default:
				field.SetString(s)
			}
		case ConfigPath:
			p, isString := v.(string)
			if !isString {
				chk.problems = append(chk.problems, wrongValue(key, v))
				continue
			}
			field.SetString(strings.TrimSpace(p))
		case ConfigSelectors:
			list, ok := selectorList(v)
			switch {
			case !ok:
				chk.problems = append(chk.problems, wrongValue(key, v))
			case uint64(len(list)) > key.Max:
				chk.problems = append(chk.problems, fmt.Sprintf("%s has %d selectors: at most %d tools may be kept "+
					"in view, or the tool list is as long as Tool Search is meant to avoid", key.Name, len(list), key.Max))
			default:
				if err := (&catalog.Policy{Agent: catalog.Rule{Allow: list}}).Validate(); err != nil {
					// An unknown annotation would select nothing, in silence.
					chk.problems = append(chk.problems, key.Name+": "+strings.TrimPrefix(err.Error(), catalog.ErrInvalidPolicy.Error()+": "))
					continue
				}
				field.Set(reflect.ValueOf(list))
			}
		case ConfigInteger:
			n, isNum := v.(json.Number)
			u, positive := uint64(0), false
			if isNum {
				u, positive = positiveInteger(n)
			}
			if !positive {
				chk.problems = append(chk.problems, wrongValue(key, v))
				continue
			}
			integers[key.Name] = u
			setUint(field, u)
		}
	}
	if c.Mode == ModeOff {
		c.Enabled = false
	}
	c = c.resolved()
	for _, key := range ConfigKeys() {
		if u, ok := integers[key.Name]; ok {
			if got := getUint(configField(&c, key.Name)); got != u {
				chk.warnings = append(chk.warnings, clampWarning(key, u, got))
			}
		}
	}
	var unknown []string
	for k := range obj {
		if _, ok := LookupConfigKey(k); !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		chk.strict = append(chk.strict, fmt.Sprintf("unknown key %q: did you mean %q? (valid keys: %s)", k,
			closest(k, ConfigKeyNames()), strings.Join(ConfigKeyNames(), ", ")))
	}
	return c
}

// wrongValue is the message for a value of the wrong type or outside what a key accepts: the key, what it
// takes, with an example, and what it got.
func wrongValue(key ConfigKey, v any) string {
	return fmt.Sprintf("%s must be %s (got %s)", key.Name, key.Expected(), describeJSON(v))
}

func clampWarning(key ConfigKey, given, used uint64) string {
	bound, side := "its maximum "+formatUint(used), "above"
	if key.MaxKey != "" && used < given {
		bound = key.MaxKey + " " + formatUint(used)
	}
	if used > given {
		bound, side = "its minimum "+formatUint(used), "below"
	}
	shown := formatUint(given)
	if given == math.MaxUint64 {
		shown = "this large"
	}
	return fmt.Sprintf("%s %s is %s %s: it will be clamped to %s", key.Name, shown, side, bound, formatUint(used))
}

// configField returns the settable field of c whose json tag is name. ConfigKeys and the fields are kept in step
// by TestConfigKeysDescribeEveryField, so a missing field is a programming error.
func configField(c *Config, name string) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); tag == name {
			return v.Field(i)
		}
	}
	panic("runtime: Config has no field for key " + name)
}

// getUint reads an integer field; zero or negative (unset) reads as 0.
func getUint(v reflect.Value) uint64 {
	if v.CanInt() {
		return uint64(max(v.Int(), 0))
	}
	return v.Uint()
}

// setUint writes an integer field, saturating: a huge value stays huge, and resolved clamps it to the real bound.
func setUint(v reflect.Value, n uint64) {
	if v.CanInt() {
		v.SetInt(int64(min(n, math.MaxInt32)))
		return
	}
	v.SetUint(n)
}

// closest returns the candidate nearest to s.
func closest(s string, candidates []string) string {
	best, _ := suggest.Closest(s, candidates)
	return best
}

// selectorList reads an array of non-empty strings.
func selectorList(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, false
		}
		out = append(out, strings.TrimSpace(s))
	}
	return out, true
}

func knownMode(m Mode) bool {
	return m == ModeCode || m == ModeTools || m == ModeDirectory
}

// positiveInteger accepts a JSON number whose value is a whole number above zero. Values beyond uint64 saturate,
// since every limit is clamped far below that anyway; so does Infinity, which JSON5 allows.
func positiveInteger(n json.Number) (uint64, bool) {
	s := n.String()
	u, err := strconv.ParseUint(s, 10, 64)
	if err == nil {
		return u, u > 0
	}
	if errors.Is(err, strconv.ErrRange) {
		return math.MaxUint64, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	switch {
	case math.IsNaN(f) || f <= 0 || f != math.Trunc(f):
		return 0, false
	case f >= math.MaxUint64:
		return math.MaxUint64, true
	}
	return uint64(f), true
}

// decodeConfigValue decodes JSON or JSON5 with numbers as json.Number (Infinity and NaN included); empty input
// is nil (unset).
func decodeConfigValue(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	v, err := json5.Parse(raw)
	if err != nil {
		return nil, errors.New("not valid JSON5: " + err.Error())
	}
	return v.Interface(), nil
}

func describeJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// resolved applies defaults to zero fields and clamps the rest, so that every Config the runtime acts on is
// complete whether it came from ParseConfig or from Go code.
func (c Config) resolved() Config {
	if c.Mode == ModeOff {
		c.Enabled = false
	}
	if !c.Enabled {
		c.Mode = ModeOff
	} else if !knownMode(c.Mode) {
		c.Mode = ModeCode
	}
	keys := ConfigKeys()
	// Keys bounded by another key come after every key with a fixed bound, so the bound is resolved first.
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].MaxKey == "" && keys[j].MaxKey != "" })
	for _, key := range keys {
		if key.Type != ConfigInteger {
			continue
		}
		field := configField(&c, key.Name)
		hi, def := key.Max, key.Default
		if key.MaxKey != "" {
			hi = getUint(configField(&c, key.MaxKey))
			def = min(def, hi)
		}
		setUint(field, clamp(getUint(field), def, key.Min, hi))
	}
	return c
}

// clamp maps a zero (unset) value to def and bounds the rest to [lo, hi].
func clamp(v, def, lo, hi uint64) uint64 {
	if v == 0 {
		return def
	}
	return min(max(v, lo), hi)
}
