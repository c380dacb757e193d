package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(settings ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(settings); i += 2 {
			out = append(out, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "devel"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"pseudo-version of a clone", &debug.BuildInfo{Main: debug.Module{
			Version: "v0.0.0-20261201194955-5a72ea5c0ffe+dirty"}}, "v0.0.0-20261201194955-5a72ea5c0ffe+dirty"},
		{"clean clone", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(
			"vcs", "git", "vcs.revision", "5a72ea5c0ffee0123456789abcdef0123456789a", "vcs.time", "2026-12-01T19:49:55Z",
			"vcs.modified", "false")}, "devel 5a72ea5c0ffe (2026-12-01T19:49:55Z)"},
		{"dirty clone", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(
			"vcs.revision", "5a72ea5c0ffee0123456789abcdef0123456789a", "vcs.modified", "true")},
			"devel 5a72ea5c0ffe-dirty"},
		{"no VCS information", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, buildVersion(tt.info, tt.info != nil))
		})
	}
}

func TestVersionCommand(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "version")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "toolsearch "+currentVersion()+"\n", stdout)
	assert.NotEqual(t, "toolsearch dev\n", stdout, "the placeholder is gone")

	old := stampedVersion
	t.Cleanup(func() { stampedVersion = old })
	stampedVersion = "v2.0.0"
	assert.Equal(t, "v2.0.0", currentVersion(), "a stamped release version wins over the build info")
}
