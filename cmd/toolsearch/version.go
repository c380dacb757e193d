package main

import (
	"runtime/debug"
)

// stampedVersion is set by a release build that names its version (-ldflags "-X main.stampedVersion=v1.2.3").
var stampedVersion string

// version is what `toolsearch version` prints and what `mcp serve` tells its clients: the stamped version, else
// what the build info Go records in every binary says.
var version = currentVersion()

func currentVersion() string {
	if stampedVersion != "" {
		return stampedVersion
	}
	return buildVersion(debug.ReadBuildInfo())
}

// buildVersion names the build: the module version when the binary was built from a published module
// (`go install module@version`), else the VCS revision of the clone it was built in, with "-dirty" when the
// work tree had uncommitted changes, else "devel" (a build without VCS information, such as `go run` or a test
// binary).
func buildVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		// Since Go 1.24 a build in a clone stamps a pseudo-version here, with "+dirty" when it had changes.
		return v
	}
	var revision, modified, when string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			when = s.Value
		}
	}
	if revision == "" {
		return "devel"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	v := "devel " + revision
	if modified == "true" {
		v += "-dirty"
	}
	if when != "" {
		v += " (" + when + ")"
	}
	return v
}
