package runtime_test

import (
	"encoding/json"
	"errors"
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

		{"zero refused", `{"codeTimeoutMs": 0}`, on, "codeTimeoutMs must be a positive integer (got 0)"},
		{"negative refused", `{"maxSearchLimit": -3}`, on, "maxSearchLimit must be a positive integer (got -3)"},
		{"fraction refused", `{"searchDefaultLimit": 2.5}`, on, "searchDefaultLimit must be a positive integer (got 2.5)"},
		{"string number refused", `{"codeTimeoutMs": "5000"}`, on, `codeTimeoutMs must be a positive integer (got "5000")`},
		{"bool number refused", `{"codeMaxCalls": true}`, on, "codeMaxCalls must be a positive integer (got true)"},
		{"null number refused", `{"codeFuel": null}`, on, "codeFuel must be a positive integer (got null)"},
		{"enabled not a bool", `{"enabled": "yes"}`, def, `enabled must be true or false (got "yes")`},
		{"enabled not a bool, other keys", `{"enabled": 1, "mode": "tools"}`,
			with(on, func(c *runtime.Config) { c.Mode = runtime.ModeTools }), "enabled must be true or false (got 1)"},
		{"mode not a string", `{"mode": 1}`, on, "mode must be a string (got 1)"},
		{"string", `"code"`, def, `must be true, false or an object (got "code")`},
		{"number", `1`, def, "must be true, false or an object (got 1)"},
		{"array", `[true]`, def, "must be true, false or an object (got an array)"},
		{"invalid JSON", `{`, def, "not valid JSON"},
		{"trailing data", `true false`, def, "not valid JSON"},
		{"every problem reported", `{"codeTimeoutMs": -1, "maxSearchLimit": 0}`, on,
			"codeTimeoutMs must be a positive integer (got -1); maxSearchLimit must be a positive integer (got 0)"},
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
	}, runtime.DefaultConfig())
}

func TestValidateConfigIsStricter(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr string
	}{
		{`{"mode": "tools", "codeTimeoutMs": 5000}`, ""},
		{`true`, ""},
		{`{"mode": "turbo"}`, `mode must be one of code, tools, directory (got "turbo")`},
		{`{"mdoe": "tools"}`, `unknown key "mdoe" (known: enabled, mode, codeTimeoutMs`},
		{`{"codeTimeoutMs": -5}`, "codeTimeoutMs must be a positive integer (got -5)"},
	}
	for _, tt := range tests {
		err := runtime.ValidateConfig(json.RawMessage(tt.raw))
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
