package upstream

import (
	"encoding/json"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// The front reaches a Source through seam.Open, never through its fields: frontSide is the Source as seam.Upstream,
// and *server is each of its servers as seam.Server. Their methods are exported only to satisfy the interfaces; the
// types are not, so nothing of the seam (or of the MCP SDK) shows in this package's API.
func init() {
	seam.Provide(func(src any) seam.Upstream { return (*frontSide)(src.(*Source)) })
}

// frontSide is a Source as its fronts see it.
type frontSide Source

var (
	_ seam.Upstream = (*frontSide)(nil)
	_ seam.Server   = (*server)(nil)
	_ seam.Client   = (*clientScope)(nil)
)

func (f *frontSide) source() *Source { return (*Source)(f) }

func (f *frontSide) Servers() []seam.Server {
	out := make([]seam.Server, len(f.servers))
	for i, u := range f.servers {
		out[i] = u
	}
	return out
}

func (f *frontSide) Tools() []catalog.Tool { return f.source().Tools() }

func (f *frontSide) Changed() <-chan struct{} { return f.source().Changed() }

// Status is the Source's Status as the front reads it. A failed server whose next attempt is due is retrying: the
// supervisor starts the attempt when the delay ends, and the Source's own state stays failed until it has an
// outcome.
func (f *frontSide) Status() seam.Status {
	s := f.source()
	out := seam.Status{Closed: s.isClosed(), Servers: make([]seam.ServerStatus, len(s.servers))}
	now := time.Now()
	for i, u := range s.servers {
		st := u.status()
		out.Servers[i] = seam.ServerStatus{Server: u, State: frontState(st, now), Err: st.Err, NextRetry: st.NextRetry,
			Tools: st.Tools, Since: st.Since, AttemptDeadline: st.AttemptDeadline, FeaturesListed: u.featuresListed(),
			Installer: st.Installer}
		if st.Err != nil {
			out.Servers[i].Reason = unwrapServer(st.Err).Error()
		}
	}
	return out
}

// frontState is a server's State as the front reports it at now.
func frontState(st Status, now time.Time) seam.State {
	switch st.State {
	case StateIdle:
		return seam.StateIdle
	case StateStarting:
		return seam.StateStarting
	case StateReady:
		return seam.StateReady
	case StateFailed:
		if st.NextRetry.After(now) {
			return seam.StateFailed
		}
		return seam.StateRetrying
	}
	return seam.StateClosed
}

func (f *frontSide) FeaturesChanged() <-chan struct{} { return f.source().featuresChanged() }

func (f *frontSide) ListedTool(h catalog.Handler, name string) (*sdk.Tool, bool) {
	th, ok := h.(*toolHandler)
	if !ok || th.listed == nil || !seam.IsObjectSchema(th.listed.InputSchema) {
		return nil, false
	}
	return th.listed.sdkTool(name), true
}

func (f *frontSide) SetLogLevel(level sdk.LoggingLevel) { f.source().setLogLevel(level) }

func (f *frontSide) NewClient(events seam.Events) seam.Client {
	return f.source().newClientScope(events)
}

func (f *frontSide) Watch(events seam.Events) (stop func()) { return f.events.watch(events) }

func (u *server) Name() string { return u.name }

func (u *server) SourceName() string { return u.sourceName }

func (u *server) Features() seam.Features { return u.feat.snapshot() }

// sdkTool is a listed tool as the front offers it in off mode: under the name the model sees, otherwise as its
// server listed it.
func (t *remoteTool) sdkTool(name string) *sdk.Tool {
	out := &sdk.Tool{Name: name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
	if len(t.OutputSchema) > 0 {
		out.OutputSchema = t.OutputSchema
	}
	// Both are bounded with the rest of the definition (MaxToolBytes); one that does not decode is left out.
	_ = json.Unmarshal(t.Meta, &out.Meta)
	_ = json.Unmarshal(t.Icons, &out.Icons)
	if a := t.Annotations; a != nil {
		out.Annotations = &sdk.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint != nil && *a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint != nil && *a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	return out
}

// featuresListed reports whether the server's resources, templates and prompts have been listed since its
// session started.
func (u *server) featuresListed() bool {
	u.feat.mu.Lock()
	defer u.feat.mu.Unlock()
	return u.feat.listed
}
