package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/toolsearch/toolsearch/internal/json5"
)

// Redacted replaces a secret wherever one would otherwise be shown: in what a server sends back, and in the
// header values `toolsearch config get` prints.
const Redacted = "[redacted]"

// minScrubBytes is the shortest secret that is scrubbed from what servers send back. Shorter values ("1", "on")
// would match ordinary text and numbers and corrupt the JSON around them; they are no credentials anyway, and
// toolsearch never prints header values itself.
const minScrubBytes = 8

// envRef matches one ${NAME} reference in an env or header value, or ${NAME:-default} (Claude Code's and the
// shell's form: the default when NAME is unset or empty).
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// resolveRef resolves one match of envRef: the variable's value, or the reference's default when the variable is
// unset or empty. ok is false when the variable is unset and there is no default.
func resolveRef(ref string, lookup func(string) (string, bool)) (variable, value string, ok bool) {
	m := envRef.FindStringSubmatch(ref)
	variable = m[1]
	value, ok = lookup(variable)
	if def, hasDefault := strings.CutPrefix(m[2], ":-"); hasDefault && value == "" {
		return variable, def, true
	}
	return variable, value, ok
}

// checkHeader validates one configured header. Its messages never quote the value: it may be a secret.
func checkHeader(name, value string) error {
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return fmt.Errorf("header name %q is not a valid HTTP header name", name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("header %q: the value contains a line break or NUL", name)
	}
	// Every "${" must open a well-formed reference: a typo such as "${GITHUB TOKEN}" would otherwise be sent
	// as it is and fail far from its cause.
	rest := envRef.ReplaceAllString(value, "")
	if i := strings.Index(rest, "${"); i >= 0 {
		return fmt.Errorf(`header %q: "${" does not start a ${NAME} reference (NAME: letters, digits and _)`, name)
	}
	return nil
}

// isTokenChar reports whether r may appear in an HTTP header name (RFC 9110 token).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// expandHeaders resolves the ${NAME} references of the configured headers from the environment (lookup is
// os.LookupEnv outside tests). It returns the headers to send and the secrets to scrub from everything the server
// sends back: the value of every variable used, every whole value, and of a literal "Scheme credentials" value
// the credentials alone.
func expandHeaders(headers map[string]string, lookup func(string) (string, bool)) (map[string]string, [][]byte, error) {
	if len(headers) == 0 {
		return nil, nil, nil
	}
	out := make(map[string]string, len(headers))
	var secrets []string
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		template := headers[name]
		var missing error
		value := envRef.ReplaceAllStringFunc(template, func(ref string) string {
			variable, v, ok := resolveRef(ref, lookup)
			switch {
			case !ok && missing == nil:
				missing = fmt.Errorf("header %q: environment variable %s is not set", name, variable)
			case ok && v == "" && missing == nil:
				missing = fmt.Errorf("header %q: environment variable %s is empty", name, variable)
			case strings.ContainsAny(v, "\r\n\x00") && missing == nil:
				missing = fmt.Errorf("header %q: environment variable %s contains a line break or NUL", name, variable)
			}
			secrets = append(secrets, v)
			return v
		})
		if missing != nil {
			return nil, nil, missing
		}
		out[name] = value
		secrets = append(secrets, value)
		if scheme, credentials, ok := strings.Cut(value, " "); ok && scheme != "" && !strings.Contains(scheme, "$") {
			secrets = append(secrets, credentials)
		}
	}
	return out, scrubList(secrets), nil
}

// scrubList turns secrets into the byte strings to replace: long enough to be credentials, each also in the
// form JSON escapes it to, longest first (so a secret that contains another is replaced whole), no duplicates.
func scrubList(secrets []string) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	add := func(s string) {
		if len(s) >= minScrubBytes && !seen[s] {
			seen[s] = true
			out = append(out, []byte(s))
		}
	}
	for _, s := range secrets {
		add(s)
		if quoted, err := json.Marshal(s); err == nil {
			add(string(quoted[1 : len(quoted)-1]))
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// scrub replaces every secret in b: as its bytes, and as a JSON string literal spells it with escapes. A message
// that is JSON stays JSON: secrets are replaced inside its strings and numbers only, never across its structure
// (a secret such as `a"b`, `x\\y` or `1,2]` would otherwise cut a literal open or close an array). It returns b
// itself when there is nothing to replace.
func scrub(b []byte, secrets [][]byte) []byte {
	if len(secrets) == 0 {
		return b
	}
	escaped := bytes.IndexByte(b, '\\') >= 0
	if !escaped && !containsAny(b, secrets) {
		return b // without escapes a secret can only be there as its bytes
	}
	if json.Valid(b) {
		return scrubJSON(b, secrets)
	}
	if !escaped {
		return scrubBytes(b, secrets)
	}
	return scrubLiterals(b, secrets)
}

func containsAny(b []byte, secrets [][]byte) bool {
	for _, s := range secrets {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

// scrubJSON is scrub for a valid JSON value. Each string literal (keys too) is read as its reader decodes it and
// written again, minimally escaped, if it held a secret; a number whose digits hold a secret becomes the string
// Redacted. Everything between literals is structure and is kept as it came.
func scrubJSON(b []byte, secrets [][]byte) []byte {
	out := make([]byte, 0, len(b))
	copied := 0 // b[:copied] is in out
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			end, escaped := stringLiteralEnd(b, i)
			if end < 0 {
				return append(out, scrubBytes(bytes.Clone(b[copied:]), secrets)...) // cannot happen in valid JSON
			}
			var clean string
			changed := false
			if escaped {
				var s string
				if json.Unmarshal(b[i:end], &s) == nil {
					clean, changed = replaceSecrets(s, secrets)
				}
			} else if containsAny(b[i+1:end-1], secrets) {
				// Without escapes the literal's bytes are what a reader gets (invalid UTF-8 aside, which no
				// secret holds); a secret found there holds no quote or backslash, so the bytes are replaced.
				out = append(out, b[copied:i+1]...)
				out = append(append(out, scrubBytes(bytes.Clone(b[i+1:end-1]), secrets)...), '"')
				copied = end
			}
			if changed {
				out = append(append(out, b[copied:i]...), encodeString(clean)...)
				copied = end
			}
			i = end
		case c == '-' || (c >= '0' && c <= '9'):
			end := i + 1
			for end < len(b) && strings.IndexByte("0123456789+-.eE", b[end]) >= 0 {
				end++
			}
			if containsAny(b[i:end], secrets) {
				out = append(append(out, b[copied:i]...), `"`+Redacted+`"`...)
				copied = end
			}
			i = end
		default:
			i++
		}
	}
	return append(out, b[copied:]...)
}

// scrubBytes replaces the secrets' bytes wherever they are.
func scrubBytes(b []byte, secrets [][]byte) []byte {
	for _, s := range secrets {
		if bytes.Contains(b, s) {
			b = bytes.ReplaceAll(b, s, []byte(Redacted))
		}
	}
	return b
}

// scrubLiterals is scrub for a message with escapes in it. A server may write "/" as "\\/" or any character as
// "\\uXXXX" (PHP's and some Java encoders do): then the secret's bytes are not in the message, but every reader
// that decodes it — the SDK, the model, a log — sees the secret; and matching bytes across an escape would break
// it. So each JSON string literal with an escape is decoded, and written again, minimally escaped, if it held a
// secret; the rest of the message (literals without escapes, and whatever is not JSON) is matched as bytes.
func scrubLiterals(b []byte, secrets [][]byte) []byte {
	out := make([]byte, 0, len(b))
	plainFrom := 0 // start of the bytes matched as bytes
	for i := 0; i < len(b); {
		if b[i] != '"' {
			i++
			continue
		}
		end, escaped := stringLiteralEnd(b, i)
		if end < 0 {
			break // an unterminated literal: the rest is matched as bytes
		}
		if escaped {
			out = append(out, scrubBytes(bytes.Clone(b[plainFrom:i]), secrets)...)
			var s string
			clean, changed := "", false
			if json.Unmarshal(b[i:end], &s) == nil {
				clean, changed = replaceSecrets(s, secrets)
			}
			if changed {
				out = append(out, encodeString(clean)...)
			} else {
				out = append(out, b[i:end]...)
			}
			plainFrom = end
		}
		i = end
	}
	return append(out, scrubBytes(bytes.Clone(b[plainFrom:]), secrets)...)
}

// stringLiteralEnd returns the index just past the JSON string literal that starts at b[start] (a quote), or -1
// when it does not end, and whether it holds an escape.
func stringLiteralEnd(b []byte, start int) (end int, escaped bool) {
	for j := start + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}

func replaceSecrets(s string, secrets [][]byte) (string, bool) {
	changed := false
	for _, secret := range secrets {
		if strings.Contains(s, string(secret)) {
			s, changed = strings.ReplaceAll(s, string(secret), Redacted), true
		}
	}
	return s, changed
}

// encodeString writes s as a JSON string literal, escaping only what JSON requires.
func encodeString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// RedactConfigValue hides the header values of MCP servers in value, the JSON found at the dotted key of a
// config document ("" is the whole document, "mcpServers.github.headers" one server's headers), for commands
// that print config values. A value is shown as written only when its secret comes from the environment: one or
// more ${NAME} references, optionally after a scheme word ("Bearer ${GITHUB_TOKEN}"). Anything else is replaced
// by Redacted. Keys, order and everything else are kept; a value that does not parse is returned as it is.
func RedactConfigValue(key string, value json.RawMessage) json.RawMessage {
	var path []string
	if key != "" {
		path = strings.Split(key, ".")
	}
	if !mayHoldHeaders(path) {
		return value
	}
	v, err := json5.Parse(value)
	if err != nil {
		return value
	}
	var cuts []*json5.Value // header values to hide, in source order
	collectHeaders(v, path, &cuts)
	if len(cuts) == 0 {
		return value
	}
	out := make([]byte, 0, len(value))
	from := 0
	for _, c := range cuts {
		out = append(append(out, value[from:c.Start]...), `"`+Redacted+`"`...)
		from = c.End
	}
	return append(out, value[from:]...)
}

// headerPath is where header values live: mcpServers.<server>.headers.<name>; "" matches any one segment.
var headerPath = []string{ConfigKey, "", "headers", ""}

// mayHoldHeaders reports whether the value at path is, or contains, a header value.
func mayHoldHeaders(path []string) bool {
	if len(path) > len(headerPath) {
		return false
	}
	for i, seg := range path {
		if headerPath[i] != "" && headerPath[i] != seg {
			return false
		}
	}
	return true
}

// collectHeaders appends the header values below v (found at path) that must not be shown.
func collectHeaders(v *json5.Value, path []string, cuts *[]*json5.Value) {
	if len(path) == len(headerPath) {
		if v.Kind == json5.String && !fromEnvironment(v.Str) {
			*cuts = append(*cuts, v)
		}
		return
	}
	if v.Kind != json5.Object {
		return
	}
	for _, m := range v.Members {
		next := append(path[:len(path):len(path)], m.Key)
		if mayHoldHeaders(next) {
			collectHeaders(m.Value, next, cuts)
		}
	}
}

// envOnlyValue is a header value whose secret is all in the environment.
var envOnlyValue = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]* )?(\$\{[A-Za-z_][A-Za-z0-9_]*\})+$`)

func fromEnvironment(value string) bool { return envOnlyValue.MatchString(value) }
