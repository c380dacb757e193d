package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

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
)

// Config is the resolved value of tools.toolSearch: every field holds its effective value after defaults and
// clamps. Mode is ModeOff exactly when Enabled is false.
//
// A Config built in Go rather than by ParseConfig may leave fields zero: New resolves zero fields to their
// defaults, an empty Mode to ModeCode, and clamps the rest the same way ParseConfig does.
type Config struct {
	Enabled            bool   `json:"enabled"`
	Mode               Mode   `json:"mode"`
	CodeTimeoutMs      int    `json:"codeTimeoutMs"`
	SearchDefaultLimit int    `json:"searchDefaultLimit"`
	MaxSearchLimit     int    `json:"maxSearchLimit"`
	CodeFuel           uint64 `json:"codeFuel"`
	CodeMemoryBytes    uint64 `json:"codeMemoryBytes"`
	CodeMaxOutputBytes int    `json:"codeMaxOutputBytes"`
	CodeMaxCalls       int    `json:"codeMaxCalls"`
}

// DefaultConfig is what an unset tools.toolSearch resolves to: off, with every limit at its default.
func DefaultConfig() Config {
	return Config{}.resolved()
}

// ConfigError lists every value of tools.toolSearch that was refused. ParseConfig returns it next to a usable
// Config in which each refused value was replaced by its default, so a caller may log it and carry on, or fail.
type ConfigError struct {
	Problems []string
}

func (e *ConfigError) Error() string {
	return "tools.toolSearch: " + strings.Join(e.Problems, "; ")
}

// ConfigKeys returns the keys tools.toolSearch understands, in documentation order; ValidateConfig refuses
// any other.
func ConfigKeys() []string {
	return []string{
		"enabled", "mode", "codeTimeoutMs", "searchDefaultLimit", "maxSearchLimit",
		"codeFuel", "codeMemoryBytes", "codeMaxOutputBytes", "codeMaxCalls",
	}
}

// ParseConfig resolves the value of tools.toolSearch: true | false | {enabled?, mode?, codeTimeoutMs?,
// searchDefaultLimit?, maxSearchLimit?, codeFuel?, codeMemoryBytes?, codeMaxOutputBytes?, codeMaxCalls?}.
//
//   - empty input, null, false or {} → off;
//   - true → on in code mode;
//   - an object with any key but enabled → on, unless enabled is false;
//   - an unknown mode → code; "off" → off;
//   - limits must be positive integers (5.0 counts as 5) and are then clamped: codeTimeoutMs 1000–60000
//     (10000), maxSearchLimit 1–50 (20), searchDefaultLimit 1..maxSearchLimit (8), plus the sandbox limits
//     (see the Min/Max/Default constants).
//
// Anything else (a string, an array, enabled that is not a boolean, a zero, negative, fractional or non-numeric
// limit) is a *ConfigError; the returned Config is still resolved, with defaults in place of the refused values.
// Unknown keys are ignored here (a newer config may add some); ValidateConfig refuses them.
func ParseConfig(raw json.RawMessage) (Config, error) {
	c, problems, _ := parseConfig(raw)
	if len(problems) > 0 {
		return c, &ConfigError{Problems: problems}
	}
	return c, nil
}

// ValidateConfig is ParseConfig made strict for edits: it also refuses unknown keys and unknown modes, which
// ParseConfig tolerates. `toolsearch config set` uses it so that a typo never reaches the file.
func ValidateConfig(raw json.RawMessage) error {
	_, problems, strict := parseConfig(raw)
	problems = append(problems, strict...)
	if len(problems) > 0 {
		return &ConfigError{Problems: problems}
	}
	return nil
}

// parseConfig returns the resolved config, the problems ParseConfig reports, and the extra ones only
// ValidateConfig reports.
func parseConfig(raw json.RawMessage) (c Config, problems, strict []string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return DefaultConfig(), nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return DefaultConfig(), []string{"not valid JSON: " + err.Error()}, nil
	}
	if dec.More() {
		return DefaultConfig(), []string{"not valid JSON: extra data after the value"}, nil
	}
	switch v := v.(type) {
	case nil:
		return DefaultConfig(), nil, nil
	case bool:
		return Config{Enabled: v}.resolved(), nil, nil
	case map[string]any:
		return parseObject(v)
	}
	return DefaultConfig(), []string{fmt.Sprintf("must be true, false or an object (got %s)", describeJSON(v))}, nil
}

func parseObject(obj map[string]any) (c Config, problems, strict []string) {
	configured := false
	for k := range obj {
		if k != "enabled" {
			configured = true
		}
	}
	c.Enabled = configured
	if v, ok := obj["enabled"]; ok {
		if b, isBool := v.(bool); isBool {
			c.Enabled = b
		} else {
			problems = append(problems, fmt.Sprintf("enabled must be true or false (got %s)", describeJSON(v)))
		}
	}
	if v, ok := obj["mode"]; ok {
		s, isString := v.(string)
		switch {
		case !isString:
			problems = append(problems, fmt.Sprintf("mode must be a string (got %s)", describeJSON(v)))
		case Mode(s) == ModeOff:
			c.Enabled = false
		case knownMode(Mode(s)):
			c.Mode = Mode(s)
		default:
			strict = append(strict, fmt.Sprintf("mode must be one of code, tools, directory (got %q)", s))
		}
	}
	ints := []struct {
		key string
		set func(uint64)
	}{
		{"codeTimeoutMs", func(n uint64) { c.CodeTimeoutMs = clampInt(n) }},
		{"searchDefaultLimit", func(n uint64) { c.SearchDefaultLimit = clampInt(n) }},
		{"maxSearchLimit", func(n uint64) { c.MaxSearchLimit = clampInt(n) }},
		{"codeFuel", func(n uint64) { c.CodeFuel = n }},
		{"codeMemoryBytes", func(n uint64) { c.CodeMemoryBytes = n }},
		{"codeMaxOutputBytes", func(n uint64) { c.CodeMaxOutputBytes = clampInt(n) }},
		{"codeMaxCalls", func(n uint64) { c.CodeMaxCalls = clampInt(n) }},
	}
	for _, f := range ints {
		v, ok := obj[f.key]
		if !ok {
			continue
		}
		n, isNum := v.(json.Number)
		if !isNum {
			problems = append(problems, fmt.Sprintf("%s must be a positive integer (got %s)", f.key, describeJSON(v)))
			continue
		}
		u, ok := positiveInteger(n)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s must be a positive integer (got %s)", f.key, n))
			continue
		}
		f.set(u)
	}
	var unknown []string
	for k := range obj {
		if !knownKey(k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		strict = append(strict, fmt.Sprintf("unknown key %s (known: %s)", strings.Join(unknown, ", "),
			strings.Join(ConfigKeys(), ", ")))
	}
	return c.resolved(), problems, strict
}

func knownKey(k string) bool {
	for _, known := range ConfigKeys() {
		if k == known {
			return true
		}
	}
	return false
}

func knownMode(m Mode) bool {
	return m == ModeCode || m == ModeTools || m == ModeDirectory
}

// positiveInteger accepts a JSON number whose value is a whole number above zero. Values beyond uint64 saturate,
// since every limit is clamped far below that anyway.
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

// clampInt keeps a huge value huge while fitting it in an int; resolved clamps it to the real bound.
func clampInt(n uint64) int {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
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
	c.CodeTimeoutMs = clamp(c.CodeTimeoutMs, DefaultCodeTimeoutMs, MinCodeTimeoutMs, MaxCodeTimeoutMs)
	c.MaxSearchLimit = clamp(c.MaxSearchLimit, DefaultMaxSearchLimit, 1, MaxMaxSearchLimit)
	c.SearchDefaultLimit = clamp(c.SearchDefaultLimit, min(DefaultSearchDefaultLimit, c.MaxSearchLimit), 1, c.MaxSearchLimit)
	c.CodeFuel = clamp(c.CodeFuel, DefaultCodeFuel, MinCodeFuel, MaxCodeFuel)
	c.CodeMemoryBytes = clamp(c.CodeMemoryBytes, DefaultCodeMemoryBytes, MinCodeMemoryBytes, MaxCodeMemoryBytes)
	c.CodeMaxOutputBytes = clamp(c.CodeMaxOutputBytes, DefaultCodeMaxOutputBytes, MinCodeMaxOutputBytes, MaxCodeMaxOutputBytes)
	c.CodeMaxCalls = clamp(c.CodeMaxCalls, DefaultCodeMaxCalls, 1, MaxCodeMaxCalls)
	return c
}

// clamp maps a non-positive (unset) value to def and bounds the rest to [lo, hi].
func clamp[T int | uint64](v, def, lo, hi T) T {
	if v <= 0 {
		return def
	}
	return min(max(v, lo), hi)
}
