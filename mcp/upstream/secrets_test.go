package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandHeaders(t *testing.T) {
	env := map[string]string{"TOKEN": "ghp_0123456789abcdef", "EMPTY": "", "SHORT": "on", "BAD": "a\r\nX-Evil: 1"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }

	headers, secrets, err := expandHeaders(map[string]string{
		"Authorization": "Bearer ${TOKEN}",
		"X-Static":      "token static-credential",
		"X-Flag":        "${SHORT}",
		"X-Dollar":      "costs $5",
		"X-Default":     "${MISSING:-anonymous}",
	}, lookup)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"Authorization": "Bearer ghp_0123456789abcdef",
		"X-Static":      "token static-credential",
		"X-Flag":        "on",
		"X-Dollar":      "costs $5",
		"X-Default":     "anonymous",
	}, headers)
	var got []string
	for _, s := range secrets {
		got = append(got, string(s))
	}
	assert.ElementsMatch(t, []string{"Bearer ghp_0123456789abcdef", "ghp_0123456789abcdef",
		"token static-credential", "static-credential", "costs $5", "anonymous"}, got, "values under 8 bytes are not scrubbed")

	for _, tc := range []struct{ value, want string }{
		{"Bearer ${MISSING}", `header "H": environment variable MISSING is not set`},
		{"${MISSING:-}", `header "H": environment variable MISSING is empty`},
		{"${EMPTY}", `header "H": environment variable EMPTY is empty`},
		{"${BAD}", `header "H": environment variable BAD contains a line break or NUL`},
	} {
		_, _, err := expandHeaders(map[string]string{"H": tc.value}, lookup)
		require.Error(t, err, tc.value)
		assert.Equal(t, tc.want, err.Error())
	}
}

func TestHeaderValidation(t *testing.T) {
	for _, tc := range []struct {
		headers map[string]string
		want    string
	}{
		{map[string]string{"Bad Name": "x"}, `header name "Bad Name" is not a valid HTTP header name`},
		{map[string]string{"X": "Bearer ${GITHUB TOKEN}"}, `header "X": "${" does not start a ${NAME} reference`},
		{map[string]string{"X": "Bearer ${TOKEN"}, `header "X": "${" does not start a ${NAME} reference`},
		{map[string]string{"X": "a\nb"}, `header "X": the value contains a line break or NUL`},
	} {
		cfg := &Config{Servers: map[string]ServerConfig{"r": {URL: "https://example.com/mcp", Headers: tc.headers}}}
		err := cfg.Validate()
		require.ErrorIs(t, err, ErrConfig)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), "TOKEN}", "the value is not quoted: it may be a secret")
	}
}

func TestRedactConfigValue(t *testing.T) {
	doc := `{"mcpServers":{"gh":{"url":"https://x/mcp","headers":{"Authorization":"Bearer ${GITHUB_TOKEN}",` +
		`"X-Api-Key":"sk-literal-secret","X-Two":"${A}${B}","X-Mixed":"Bearer sk-${A}"},"env":{"K":"v"}}},"tools":{"headers":{"a":"b"}}}`
	want := `{"mcpServers":{"gh":{"url":"https://x/mcp","headers":{"Authorization":"Bearer ${GITHUB_TOKEN}",` +
		`"X-Api-Key":"[redacted]","X-Two":"${A}${B}","X-Mixed":"[redacted]"},"env":{"K":"v"}}},"tools":{"headers":{"a":"b"}}}`
	assert.Equal(t, want, string(RedactConfigValue("", json.RawMessage(doc))), "order and everything else are kept")

	var servers struct{ McpServers json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(doc), &servers))
	assert.NotContains(t, string(RedactConfigValue("mcpServers", servers.McpServers)), "sk-literal-secret")
	assert.Equal(t, `"[redacted]"`, string(RedactConfigValue("mcpServers.gh.headers.X-Api-Key", json.RawMessage(`"sk-literal-secret"`))))
	assert.Equal(t, `"Bearer ${T}"`, string(RedactConfigValue("mcpServers.gh.headers.Authorization", json.RawMessage(`"Bearer ${T}"`))))
	assert.Equal(t, `{"a":"b"}`, string(RedactConfigValue("tools.headers", json.RawMessage(`{"a":"b"}`))))
}

// secretServer is a streamable HTTP MCP server that wants "Bearer <token>" and does everything a careless or
// hostile server can do with it: quotes it in a tool description, in a tool result, in a JSON-RPC error and in
// the body of its 401 when the token is wrong. It also lists a tool too large to keep.
func secretServer(t *testing.T, token string, jsonResponses bool) *httptest.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "secret", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&sdk.Tool{Name: "whoami", Description: "Says who you are; you sent Bearer " + token, InputSchema: schema},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you are " + req.Extra.Header.Get("Authorization")}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "refuse", Description: "Fails.", InputSchema: schema},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, fmt.Errorf("token %s has no access", token)
		})
	srv.AddTool(&sdk.Tool{Name: "enormous", Description: strings.Repeat("e", MaxToolBytes), InputSchema: schema},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{JSONResponse: jsonResponses})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"unknown credentials: %s"}}`, got)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// A header secret is sent to its server and nowhere else: not in progress lines, statuses, errors, tool
// descriptions or results, whatever the server echoes, over JSON and event-stream responses alike.
func TestHeaderSecretsNeverShow(t *testing.T) {
	const token = "ghp_TopSecretValue0123456789"
	const wrong = "ghp_WrongButAlsoSecret987"
	t.Setenv("TS_TEST_TOKEN", token)
	t.Setenv("TS_TEST_WRONG", wrong)
	for _, jsonResponses := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponses), func(t *testing.T) {
			ts := secretServer(t, token, jsonResponses)
			printed := &syncBuffer{}
			opts := fastOptions(printed)
			opts.ServerStderr = printed
			src := newChildSource(t, map[string]ServerConfig{
				"good":    {URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer ${TS_TEST_TOKEN}"}},
				"wrong":   {URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer ${TS_TEST_WRONG}"}},
				"missing": {URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer ${TS_TEST_UNSET}"}},
			}, opts)

			status := map[string]Status{}
			for _, st := range src.Status() {
				status[st.Name] = st
				fmt.Fprintf(printed, "%+v %v\n", st, st.Err)
			}
			require.Equal(t, StateReady, status["good"].State, "%v\n%s", status["good"].Err, printed.String())
			assert.ElementsMatch(t, []string{"mcp:good:whoami", "mcp:good:refuse"}, names(src))
			assert.Contains(t, printed.String(), `mcp: good: skipping tool "enormous": its definition is`)

			require.Equal(t, StateFailed, status["missing"].State)
			assert.Contains(t, status["missing"].Err.Error(), `mcp server "missing": start: header "Authorization": environment variable TS_TEST_UNSET is not set`)
			require.Equal(t, StateFailed, status["wrong"].State)
			assert.Contains(t, status["wrong"].Err.Error(), "unknown credentials")
			assert.Contains(t, status["wrong"].Err.Error(), Redacted, "the server quoted the wrong token back")

			for _, tool := range src.Tools() {
				fmt.Fprintln(printed, tool.Description)
				if tool.Name == "whoami" {
					assert.Contains(t, tool.Description, "you sent "+Redacted)
				}
			}
			res, err := call(t, src, "whoami", `{}`)
			require.NoError(t, err)
			assert.Equal(t, "you are "+Redacted, res.text, "the header arrived, its echo did not")
			fmt.Fprintln(printed, res.text)
			res, err = call(t, src, "refuse", `{}`)
			require.NoError(t, err)
			assert.True(t, res.isError)
			fmt.Fprintln(printed, res.text)

			require.NoError(t, src.Close(context.Background()))
			for _, secret := range []string{token, wrong} {
				assert.NotContains(t, printed.String(), secret)
			}
		})
	}
}
