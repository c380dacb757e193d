package runtime_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

func TestParseConfig(t *testing.T) {
	def := runtime.DefaultConfig()
	on := def
	on.Enabled, on.Mode = true, runtime.ModeCode
	with := func(base runtime.Config, f func(*runtime.Config)) runtime.Config {
		f(&base)
		return base
	}
	tests := []struct {
		name    string
		raw     string
		want    runtime.Config
		wantErr string // substring of the *ConfigError; "" for none
	}{
		{"unset", ``, def, ""},
		{"null", `null`, def, ""},
		{"empty object is off", `{}`, def, ""},
		{"false", `false`, def, ""},
		{"true is code mode", `true`, on, ""},
		{"enabled only", `{"enabled": true}`, on, ""},
		{"enabled false wins over other keys", `{"enabled": false, "mode": "tools"}`, def, ""},
		{"any key but enabled turns it on", `{"codeTimeoutMs": 5000}`, with(on, func(c *runtime.Config) { c.CodeTimeoutMs = 5000 }), ""},
		{"mode tools", `{"mode": "tools"}`, with(on, func(c *runtime.Config) { c.Mode = runtime.ModeTools }), ""},
		{"mode directory", `{"mode": "directory"}`, with(on, func(c *runtime.Config) { c.Mode = runtime.ModeDirectory }), ""},
		{"mode code", `{"mode": "code"}`, on, ""},
		{"unknown mode is code", `{"mode": "turbo"}`, on, ""},
		{"mode off", `{"mode": "off"}`, def, ""},
		{"unknown key still turns it on", `{"future": 1}`, on, ""},
		{"limits", `{"searchDefaultLimit": 3, "maxSearchLimit": 10}`,
			with(on, func(c *runtime.Config) { c.SearchDefaultLimit, c.MaxSearchLimit = 3, 10 }), ""},
		{"integral float", `{"codeTimeoutMs": 2000.0}`, with(on, func(c *runtime.Config) { c.CodeTimeoutMs = 2000 }), ""},
		{"exponent", `{"codeTimeoutMs": 2e3}`, with(on, func(c *runtime.Config) { c.CodeTimeoutMs = 2000 }), ""},

		{"timeout clamped up", `{"codeTimeoutMs": 10}`, with(on, func(c *runtime.Config) { c.CodeTimeoutMs = 1000 }), ""},
		{"timeout clamped down", `{"codeTimeoutMs": 999999}`, with(on, func(c *runtime.Config) { c.CodeTimeoutMs = 60000 }), ""},
		{"huge timeout clamped", `{"codeTimeoutMs": 1e300}`, with(on, func(c *runtime.Config) { c.CodeTimeoutMs = 60000 }), ""},
		{"huge integer clamped", `{"codeTimeoutMs": 123456789012345678901234567890}`, with(on, func(c *runtime.Config) { c.CodeTimeoutMs = 60000 }), ""},
		{"max limit clamped", `{"maxSearchLimit": 500}`, with(on, func(c *runtime.Config) { c.MaxSearchLimit = 50 }), ""},
		{"default limit clamped to max", `{"maxSearchLimit": 5, "searchDefaultLimit": 9}`,
			with(on, func(c *runtime.Config) { c.MaxSearchLimit, c.SearchDefaultLimit = 5, 5 }), ""},
		{"default limit follows a small max", `{"maxSearchLimit": 3}`,
			with(on, func(c *runtime.Config) { c.MaxSearchLimit, c.SearchDefaultLimit = 3, 3 }), ""},
		{"sandbox limits", `{"codeFuel": 5000000, "codeMemoryBytes": 33554432, "codeMaxOutputBytes": 2048, "codeMaxCalls": 7}`,
			with(on, func(c *runtime.Config) {
				c.CodeFuel, c.CodeMemoryBytes, c.CodeMaxOutputBytes, c.CodeMaxCalls = 5_000_000, 32<<20, 2048, 7
			}), ""},
		{"sandbox limits clamped", `{"codeFuel": 1, "codeMemoryBytes": 1, "codeMaxOutputBytes": 1, "codeMaxCalls": 100000}`,
			with(on, func(c *runtime.Config) {
				c.CodeFuel, c.CodeMemoryBytes, c.CodeMaxOutputBytes, c.CodeMaxCalls = runtime.MinCodeFuel,
					runtime.MinCodeMemoryBytes, runtime.MinCodeMaxOutputBytes, runtime.MaxCodeMaxCalls
			}), ""},

		{"result bound clamped low", `{"maxResultBytes": 10}`, with(on, func(c *runtime.Config) { c.MaxResultBytes = runtime.MinMaxResultBytes }), ""},
		{"result bound clamped high", `{"maxResultBytes": 1e12}`, with(on, func(c *runtime.Config) { c.MaxResultBytes = runtime.MaxMaxResultBytes }), ""},
		{"result bound kept", `{"maxResultBytes": 4096}`, with(on, func(c *runtime.Config) { c.MaxResultBytes = 4096 }), ""},
		{"result bound zero refused", `{"maxResultBytes": 0}`, on, "maxResultBytes must be a positive integer from 1024 to 16777216 (bytes), for example 100000 (got 0)"},
		{"zero refused", `{"codeTimeoutMs": 0}`, on, "codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got 0)"},
		{"negative refused", `{"maxSearchLimit": -3}`, on, "maxSearchLimit must be a positive integer from 1 to 50 (hits), for example 20 (got -3)"},
		{"fraction refused", `{"searchDefaultLimit": 2.5}`, on, "searchDefaultLimit must be a positive integer from 1 to maxSearchLimit (hits), for example 8 (got 2.5)"},
		{"string number refused", `{"codeTimeoutMs": "5000"}`, on, `codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got "5000")`},
		{"bool number refused", `{"codeMaxCalls": true}`, on, "codeMaxCalls must be a positive integer from 1 to 1000 (calls), for example 100 (got true)"},
		{"null number refused", `{"codeFuel": null}`, on, "codeFuel must be a positive integer from 1000000 to 100000000000 (fuel units), for example 2000000000 (got null)"},
		{"enabled not a bool", `{"enabled": "yes"}`, def, `enabled must be true or false (got "yes")`},
		{"enabled not a bool, other keys", `{"enabled": 1, "mode": "tools"}`,
			with(on, func(c *runtime.Config) { c.Mode = runtime.ModeTools }), "enabled must be true or false (got 1)"},
		{"mode not a string", `{"mode": 1}`, on, "mode must be one of code, tools, directory, off (got 1)"},
		{"string", `"code"`, def, `must be true, false or an object such as {mode: "tools"} (got "code")`},
		{"number", `1`, def, `must be true, false or an object such as {mode: "tools"} (got 1)`},
		{"array", `[true]`, def, `must be true, false or an object such as {mode: "tools"} (got an array)`},
		{"invalid JSON", `{`, def, "not valid JSON"},
		{"trailing data", `true false`, def, "not valid JSON"},
		{"every problem reported", `{"codeTimeoutMs": -1, "maxSearchLimit": 0}`, on,
			"codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got -1); maxSearchLimit must be a positive integer from 1 to 50 (hits), for example 20 (got 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runtime.ParseConfig(json.RawMessage(tt.raw))
			assert.Equal(t, tt.want, got)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			var ce *runtime.ConfigError
			require.True(t, errors.As(err, &ce), "want *ConfigError, got %v", err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	assert.Equal(t, runtime.Config{
		Enabled: false, Mode: runtime.ModeOff, CodeTimeoutMs: 10000, SearchDefaultLimit: 8, MaxSearchLimit: 20,
		CodeFuel: 2_000_000_000, CodeMemoryBytes: 64 << 20, CodeMaxOutputBytes: 64 << 10, CodeMaxCalls: 100,
		MaxResultBytes:    100_000,
		ApprovalTimeoutMs: 300_000,
	}, runtime.DefaultConfig())
}

func TestCheckConfigIsStricter(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr string
	}{
		{`{"mode": "tools", "codeTimeoutMs": 5000}`, ""},
		{`true`, ""},
		{`{"mode": "turbo"}`, `mode must be one of code, tools, directory, off (got "turbo")`},
		{`{"mdoe": "tools"}`, `unknown key "mdoe": did you mean "mode"? (valid keys: enabled, mode, codeTimeoutMs`},
		{`{"codeTimeoutMs": -5}`, "codeTimeoutMs must be a positive integer"},
	}
	for _, tt := range tests {
		_, _, err := runtime.CheckConfig(json.RawMessage(tt.raw))
		if tt.wantErr == "" {
			assert.NoError(t, err, tt.raw)
			continue
		}
		assert.ErrorContains(t, err, tt.wantErr, tt.raw)
		_, lenient := runtime.ParseConfig(json.RawMessage(tt.raw))
		if tt.raw != `{"codeTimeoutMs": -5}` {
			assert.NoError(t, lenient, "ParseConfig tolerates %s", tt.raw)
		}
	}
}

// A Config written in Go may leave fields zero; the runtime resolves it like ParseConfig would.
func TestNewResolvesConfig(t *testing.T) {
	tests := []struct {
		in   runtime.Config
		mode runtime.Mode
	}{
		{runtime.Config{}, runtime.ModeOff},
		{runtime.Config{Enabled: true}, runtime.ModeCode},
		{runtime.Config{Enabled: true, Mode: runtime.ModeTools, MaxSearchLimit: 99}, runtime.ModeTools},
		{runtime.Config{Enabled: true, Mode: runtime.ModeOff}, runtime.ModeOff},
		{runtime.Config{Mode: runtime.ModeTools}, runtime.ModeOff},
	}
	for _, tt := range tests {
		opts := &runtime.Options{Config: tt.in}
		if tt.mode == runtime.ModeCode {
			sb, err := runtime.SharedSandbox()
			require.NoError(t, err)
			opts.Sandbox = sb
		}
		rt, err := runtime.New(t.Context(), opts)
		require.NoError(t, err)
		assert.Equal(t, tt.mode, rt.Mode())
		cfg := rt.Config()
		assert.Equal(t, tt.mode != runtime.ModeOff, cfg.Enabled)
		assert.LessOrEqual(t, cfg.MaxSearchLimit, runtime.MaxMaxSearchLimit)
		assert.Equal(t, runtime.DefaultCodeTimeoutMs, cfg.CodeTimeoutMs)
		require.NoError(t, rt.Close(t.Context()))
	}
}

// Every field of Config is a key of tools.toolSearch with exactly one ConfigKeys entry whose type fits the
// field, so a key added to Config is parsed, clamped, validated and documented without a second list to edit.
func TestConfigKeysDescribeEveryField(t *testing.T) {
	keys := map[string]runtime.ConfigKey{}
	for _, k := range runtime.ConfigKeys() {
		_, dup := keys[k.Name]
		require.False(t, dup, "key %s listed twice", k.Name)
		keys[k.Name] = k
		assert.NotEmpty(t, k.Doc, "%s needs a Doc", k.Name)
	}
	typ := reflect.TypeFor[runtime.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		k, ok := keys[name]
		if !assert.True(t, ok, "Config.%s (key %q) has no ConfigKeys entry", f.Name, name) {
			continue
		}
		delete(keys, name)
		switch f.Type.Kind() {
		case reflect.Bool:
			assert.Equal(t, runtime.ConfigBoolean, k.Type, name)
		case reflect.String:
			if k.Type == runtime.ConfigPath {
				assert.Empty(t, k.Values, name)
				break
			}
			assert.Equal(t, runtime.ConfigEnum, k.Type, name)
			assert.NotEmpty(t, k.Values, name)
		case reflect.Int, reflect.Int64, reflect.Uint64:
			assert.Equal(t, runtime.ConfigInteger, k.Type, name)
			assert.GreaterOrEqual(t, k.Min, uint64(1), "%s: zero means unset, so the minimum is at least 1", name)
			assert.GreaterOrEqual(t, k.Default, k.Min, name)
			if k.MaxKey != "" {
				bound, ok := runtime.LookupConfigKey(k.MaxKey)
				assert.True(t, ok && bound.Type == runtime.ConfigInteger && bound.MaxKey == "", "%s: MaxKey %s", name, k.MaxKey)
			} else {
				assert.GreaterOrEqual(t, k.Max, k.Default, name)
			}
		case reflect.Slice:
			assert.Equal(t, runtime.ConfigSelectors, k.Type, name)
			assert.GreaterOrEqual(t, k.Max, uint64(1), "%s: Max bounds the entries", name)
		default:
			t.Errorf("Config.%s has type %s, which ConfigKeys cannot describe: add a ConfigType for it", f.Name, f.Type)
		}
	}
	assert.Empty(t, keys, "ConfigKeys entries without a Config field")
}

// TestCheckConfigMistakes: every mistake a person can make in tools.toolSearch is named with the key and the
// fix; a value out of range is accepted with a warning naming what it becomes.
func TestCheckConfigMistakes(t *testing.T) {
	tests := []struct {
		name, raw string
		wantErr   string   // "" for accepted
		warnings  []string // exact
	}{
		{"timeout far too large", `{"codeTimeoutMs": 1000000000}`, "",
			[]string{"codeTimeoutMs 1000000000 is above its maximum 60000: it will be clamped to 60000"}},
		{"timeout too small", `{"codeTimeoutMs": 10}`, "",
			[]string{"codeTimeoutMs 10 is below its minimum 1000: it will be clamped to 1000"}},
		{"default limit above the max", `{"maxSearchLimit": 10, "searchDefaultLimit": 12}`, "",
			[]string{"searchDefaultLimit 12 is above maxSearchLimit 10: it will be clamped to 10"}},
		{"several clamps", `{"maxSearchLimit": 500, "codeMemoryBytes": 1}`, "", []string{
			"maxSearchLimit 500 is above its maximum 50: it will be clamped to 50",
			"codeMemoryBytes 1 is below its minimum 16777216: it will be clamped to 16777216"}},
		{"beyond uint64", `{"codeFuel": 1e30}`, "",
			[]string{"codeFuel this large is above its maximum 100000000000: it will be clamped to 100000000000"}},
		{"in range", `{"codeTimeoutMs": 60000, "maxSearchLimit": 50, "searchDefaultLimit": 50}`, "", nil},

		{"wrong type names key, type and example", `{"codeTimeoutMs": "soon"}`,
			`codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got "soon")`, nil},
		{"boolean", `{"enabled": "yes"}`, `enabled must be true or false (got "yes")`, nil},
		{"misspelt mode", `{"mode": "directroy"}`,
			`mode must be one of code, tools, directory, off (got "directroy"); did you mean "directory"?`, nil},
		{"unknown key", `{"maxSearchLimt": 5}`,
			`unknown key "maxSearchLimt": did you mean "maxSearchLimit"? (valid keys: enabled, mode,`, nil},
		{"unknown key, other case", `{"CodeTimeoutMS": 5}`, `unknown key "CodeTimeoutMS": did you mean "codeTimeoutMs"?`, nil},
		{"not a config", `5`, `must be true, false or an object such as {mode: "tools"} (got 5)`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warnings, err := runtime.CheckConfig(json.RawMessage(tt.raw))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.True(t, strings.HasPrefix(err.Error(), "tools.toolSearch: "), "the error names the section: %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.warnings, warnings)
		})
	}
}
