package upstream

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
)

// baseEnv are the variables of toolsearch's own environment that every child gets: what a program needs to run
// and to find its tools, its user, its locale and the network (proxies, extra CA certificates). They are the
// variables the MCP TypeScript SDK, and so Claude Desktop, passes to the servers it starts, and a few more that
// package runners need behind a proxy or with a custom CA. Nothing else is inherited: toolsearch's own token
// (TOOLSEARCH_MCP_TOKEN), the variables other servers' headers read, and whatever secrets the shell holds stay
// with toolsearch. A server that needs more says so in its entry's env, where "${NAME}" passes one on.
var baseEnv = map[string]bool{
	// POSIX (the TypeScript SDK's list first)
	"HOME": true, "LOGNAME": true, "PATH": true, "SHELL": true, "TERM": true, "USER": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TMPDIR": true,
	"XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "XDG_RUNTIME_DIR": true,
	// the network
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true, "all_proxy": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "NODE_EXTRA_CA_CERTS": true,
}

// windowsBaseEnv is the same for Windows, where names are not case-sensitive.
var windowsBaseEnv = map[string]bool{
	"APPDATA": true, "HOMEDRIVE": true, "HOMEPATH": true, "LOCALAPPDATA": true, "PATH": true, "PATHEXT": true,
	"PROCESSOR_ARCHITECTURE": true, "SYSTEMDRIVE": true, "SYSTEMROOT": true, "TEMP": true, "TMP": true,
	"USERNAME": true, "USERPROFILE": true, "PROGRAMFILES": true, "COMSPEC": true, "WINDIR": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "NODE_EXTRA_CA_CERTS": true,
}

// BaseEnv lists, sorted, the variables a server started as a child inherits from toolsearch's environment on
// this platform (LC_* too, on every platform but Windows).
func BaseEnv() []string {
	if runtime.GOOS == "windows" {
		return slices.Sorted(maps.Keys(windowsBaseEnv))
	}
	return slices.Sorted(maps.Keys(baseEnv))
}

// inherited is the part of environ a child gets.
func inherited(environ []string, goos string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		keep := baseEnv[name] || strings.HasPrefix(name, "LC_")
		if goos == "windows" {
			keep = windowsBaseEnv[strings.ToUpper(name)]
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// expandEnv resolves the ${NAME} (and ${NAME:-default}) references of a server's env values from toolsearch's environment (lookup is
// os.LookupEnv outside tests), so that a variable the server needs is passed on by name, never written into the
// config file. A reference to a variable that is not set fails the start, naming it; a value is never quoted,
// since it may be a secret.
func expandEnv(env map[string]string, lookup func(string) (string, bool)) (map[string]string, error) {
	if len(env) == 0 {
		return env, nil
	}
	out := make(map[string]string, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		var missing error
		out[name] = envRef.ReplaceAllStringFunc(env[name], func(ref string) string {
			variable, v, ok := resolveRef(ref, lookup)
			if !ok && missing == nil {
				missing = fmt.Errorf("env %q: environment variable %s is not set", name, variable)
			}
			return v
		})
		if missing != nil {
			return nil, missing
		}
	}
	return out, nil
}
