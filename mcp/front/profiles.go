package front

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// Profile is what the HTTP clients that present one bearer token may do: its Policy replaces the runtime's for
// their runs. The caller builds the whole layered policy (a profile is not added on top of the runtime's), so a
// profile can be narrower or wider than the runtime's policy.
type Profile struct {
	// Name names the profile in the logs (the token never appears there). Required, and unique.
	Name string
	// Token is the bearer token that selects the profile. Required, unique among the profiles, different from
	// ServerOptions.BearerToken, and without white space (HTTP cannot carry it reliably).
	Token string
	// Policy is the policy of the profile's clients; nil allows every tool.
	Policy *catalog.Policy
}

// ErrInvalidOptions is wrapped by NewServer's errors about ServerOptions it cannot serve.
var ErrInvalidOptions = errors.New("mcp: invalid server options")

// defaultProfileName is how the logs name the clients of ServerOptions.BearerToken (and of stdio, or of an HTTP
// front without tokens): they have the runtime's policy. The parentheses keep it apart from any profile's name.
const defaultProfileName = "(default)"

// validateProfiles checks what NewServer is given before any token is accepted.
func validateProfiles(bearer string, profiles []Profile) error {
	if strings.IndexFunc(bearer, unicode.IsSpace) >= 0 {
		return fmt.Errorf("%w: BearerToken contains white space", ErrInvalidOptions)
	}
	names, tokens := map[string]bool{}, map[string]bool{}
	for i, p := range profiles {
		switch {
		case strings.TrimSpace(p.Name) == "":
			return fmt.Errorf("%w: Profiles[%d] has no name", ErrInvalidOptions, i)
		case names[p.Name]:
			return fmt.Errorf("%w: two profiles are named %q", ErrInvalidOptions, p.Name)
		case p.Token == "":
			return fmt.Errorf("%w: profile %q has no token", ErrInvalidOptions, p.Name)
		case strings.IndexFunc(p.Token, unicode.IsSpace) >= 0:
			return fmt.Errorf("%w: the token of profile %q contains white space", ErrInvalidOptions, p.Name)
		case tokens[p.Token] || p.Token == bearer:
			// Which profile a shared token would pick is undefined: refuse rather than pick one.
			return fmt.Errorf("%w: profile %q has a token that another profile or BearerToken also has", ErrInvalidOptions, p.Name)
		}
		if err := p.Policy.Validate(); err != nil {
			return fmt.Errorf("%w: profile %q: %w", ErrInvalidOptions, p.Name, err)
		}
		names[p.Name], tokens[p.Token] = true, true
	}
	return nil
}

// tokenSet maps bearer tokens to the profiles they select. A token is compared by its SHA-256 in constant time
// against every token, whichever matches, so that the timing tells neither a token's bytes, nor its length, nor
// which profile it belongs to.
type tokenSet struct {
	entries []tokenEntry
}

type tokenEntry struct {
	sum     [sha256.Size]byte
	profile *Profile // nil for BearerToken: the runtime's policy
}

func newTokenSet(bearer string, profiles []Profile) *tokenSet {
	ts := &tokenSet{}
	if bearer != "" {
		ts.entries = append(ts.entries, tokenEntry{sum: sha256.Sum256([]byte(bearer))})
	}
	for i := range profiles {
		ts.entries = append(ts.entries, tokenEntry{sum: sha256.Sum256([]byte(profiles[i].Token)), profile: &profiles[i]})
	}
	return ts
}

// required reports whether a request must present a token.
func (ts *tokenSet) required() bool { return len(ts.entries) > 0 }

// match returns the entry a token selects.
func (ts *tokenSet) match(token string) (*tokenEntry, bool) {
	sum := sha256.Sum256([]byte(token))
	var found *tokenEntry
	for i := range ts.entries {
		if subtle.ConstantTimeCompare(sum[:], ts.entries[i].sum[:]) == 1 {
			found = &ts.entries[i]
		}
	}
	return found, found != nil
}

// profileKey carries the profile the guard resolved for a request to tokenInfo.
type profileKey struct{}

// identity is how an HTTP request's token reaches the client session: the SDK's TokenInfo, whose UserID the
// streamable handler records when a session opens and then requires of every later request of that session
// (403 otherwise), so that a session keeps the profile it began with.
const tokenInfoProfile = "toolsearch/profile"

// withIdentity puts the resolved token's TokenInfo where the SDK's streamable handler reads it.
func withIdentity(next http.Handler) http.Handler {
	verify := func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		e, ok := r.Context().Value(profileKey{}).(*tokenEntry)
		if !ok {
			return nil, auth.ErrInvalidToken // the guard let no token through: unreachable
		}
		user := "token:default"
		if e.profile != nil {
			user = "profile:" + e.profile.Name
		}
		return &auth.TokenInfo{UserID: user, Extra: map[string]any{tokenInfoProfile: e.profile}}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
}

// requestProfile is the profile an HTTP request's token selected; ok is false for a request that came with no
// token (stdio, or an HTTP front without tokens), and profile is nil for BearerToken.
func requestProfile(req sdk.Request) (profile *Profile, ok bool) {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil, false
	}
	p, ok := extra.TokenInfo.Extra[tokenInfoProfile].(*Profile)
	return p, ok
}

// profileName names a client's profile in the logs.
func profileName(p *Profile) string {
	if p == nil {
		return defaultProfileName
	}
	return p.Name
}

// listToolsFor answers a profiled client's tools/list: the SDK's pages, without the tools the client's policy
// does not allow. A page the filter empties is followed by the next, so a client never gets an empty page that
// says more follow; pages may be shorter than PageSize, and the SDK's cursors stay valid.
func (s *Server) listToolsFor(ctx context.Context, method string, c *client, req sdk.Request, p *sdk.ListToolsParams,
	next sdk.MethodHandler) (sdk.Result, error) {
	policy := c.policy()
	view := s.currentView()
	var params sdk.ListToolsParams
	if p != nil { // a tools/list without params (the TypeScript SDK's listTools())
		params = *p
	}
	for {
		res, err := next(ctx, method, &sdk.ListToolsRequest{Session: c.ss, Params: &params, Extra: req.GetExtra()})
		if err != nil {
			return res, err
		}
		list, ok := res.(*sdk.ListToolsResult)
		if !ok {
			return res, nil
		}
		kept := list.Tools[:0:0]
		for _, t := range list.Tools {
			if tool, ok := view.run.DirectTool(t.Name); !ok || policy.Allows(tool) {
				kept = append(kept, t)
			}
		}
		list.Tools = kept
		if len(kept) > 0 || list.NextCursor == "" || list.NextCursor == params.Cursor {
			return list, nil
		}
		params.Cursor = list.NextCursor
	}
}

// instructionsFor are the server instructions a connecting client gets: the directory (directory mode) of the
// view, or, when profiles make clients differ, of the client's own run, which lists only what it may use.
func (s *Server) instructionsFor(ctx context.Context, c *client) string {
	if !s.profiled || c == nil {
		return s.currentView().run.SystemPromptSection()
	}
	lr, err := c.acquire(ctx)
	if err != nil {
		return ""
	}
	defer lr.calls.Done()
	return lr.run.SystemPromptSection()
}

// runName is the name a client's run knows a tool by that the client called by the name the front offers (the
// view's). With profiles the two can differ: a name two servers share is qualified ("<server>__<tool>") only
// where both are shown, and a profile may show one. A tool the run does not have keeps its name, which the run
// then reports as unknown.
func (s *Server) runName(run *runtime.Run, name string) string {
	if !s.profiled {
		return name
	}
	id, ok := s.currentView().run.ToolID(name)
	if !ok {
		return name
	}
	if got, ok := run.ToolID(name); ok && got == id {
		return name
	}
	for _, d := range run.Tools() {
		if got, ok := run.ToolID(d.Function.Name); ok && got == id {
			return d.Function.Name
		}
	}
	return name
}
