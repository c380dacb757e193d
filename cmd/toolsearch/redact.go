package main

import (
	"regexp"
	"slices"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// secretPaths are where a config file keeps secrets: the header values of an HTTP server, the environment
// variables of a stdio server (API tokens, mostly) and the tokens of profiles (which the loader refuses unless
// they name an environment variable, but a file being edited may hold one); "" matches any one key.
var secretPaths = [][]string{
	{upstream.ConfigKey, "", "headers", ""},
	{upstream.ConfigKey, "", "env", ""},
	{"tools", config.ProfilesKey, "", "token"},
}

// envOnly is a value whose secret is all in the environment: one or more ${NAME}, optionally after a scheme
// word ("Bearer ${GITHUB_TOKEN}"). It is shown as written, since it holds no secret.
var envOnly = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]* )?(\$\{[A-Za-z_][A-Za-z0-9_]*\})+$`)

// redactConfigText hides the secrets in text, the value found at path of the config file as
// config.File.Show writes it (path nil is the whole file): every header and env value is replaced by
// upstream.Redacted unless it only names environment variables. Everything else is kept byte for byte.
func redactConfigText(path []string, text string) string {
	if !slices.ContainsFunc(secretPaths, func(p []string) bool { return prefixMatch(path, p) }) {
		return text
	}
	v, err := json5.Parse([]byte(text))
	if err != nil {
		return text
	}
	var cuts []*json5.Value
	collectSecrets(v, slices.Clone(path), &cuts)
	if len(cuts) == 0 {
		return text
	}
	slices.SortFunc(cuts, func(a, b *json5.Value) int { return a.Start - b.Start })
	out := make([]byte, 0, len(text))
	from := 0
	for _, c := range cuts {
		out = append(append(out, text[from:c.Start]...), `"`+upstream.Redacted+`"`...)
		from = c.End
	}
	return string(append(out, text[from:]...))
}

// prefixMatch reports whether path is p or leads into it, "" in p matching any key.
func prefixMatch(path, p []string) bool {
	if len(path) > len(p) {
		return false
	}
	for i, seg := range path {
		if p[i] != "" && p[i] != seg {
			return false
		}
	}
	return true
}

func collectSecrets(v *json5.Value, path []string, cuts *[]*json5.Value) {
	for _, p := range secretPaths {
		if len(path) == len(p) && prefixMatch(path, p) {
			if v.Kind == json5.String && !envOnly.MatchString(v.Str) {
				*cuts = append(*cuts, v)
			}
			return
		}
	}
	if v.Kind != json5.Object {
		return
	}
	for _, m := range v.Members {
		next := append(path[:len(path):len(path)], m.Key)
		if slices.ContainsFunc(secretPaths, func(p []string) bool { return prefixMatch(next, p) }) {
			collectSecrets(m.Value, next, cuts)
		}
	}
}
