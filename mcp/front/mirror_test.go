package front

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// FuzzNamespacedURI: a namespaced URI always leads back to its server and the server's own URI, whatever the
// URI holds.
func FuzzNamespacedURI(f *testing.F) {
	for _, seed := range []string{"file:///shared.txt", "demo://resource/dynamic/text/{resourceId}", "toolsearch://x/y", "", "a b", "urn:x:/"} {
		f.Add("everything", seed)
	}
	f.Fuzz(func(t *testing.T, server, uri string) {
		server, _ = catalog.SafeMCPNames(server, nil) // what a server name is made into
		gotServer, own, ok := splitNamespaced(namespaced(server, uri))
		require.True(t, ok)
		assert.Equal(t, server, gotServer)
		assert.Equal(t, uri, own)
	})
}

// A per-client server's resources/updated reaches its own client only, even when another client is subscribed
// to the same URI (on an instance of its own): what changed in one client's browser is not another's business.
func TestFrontPerClientResourceUpdatedReachesItsClientOnly(t *testing.T) {
	var mu sync.Mutex
	var instances []*featureServer // the shared session's, then one per client
	dial := func(ctx context.Context, u *target) (*dialed, error) {
		fs := newFeatureServer("browser", 0)
		fs.addText("browser://page", "the page")
		mu.Lock()
		instances = append(instances, fs)
		mu.Unlock()
		return fs.dial(ctx, u)
	}
	// holding is the instance that has taken a subscription the ones in taken have not.
	holding := func(taken ...*featureServer) *featureServer {
		mu.Lock()
		defer mu.Unlock()
		for _, fs := range instances {
			if !slices.Contains(taken, fs) && slices.Contains(fs.subscriptions(), "+browser://page") {
				return fs
			}
		}
		return nil
	}
	cfg := inMemoryConfig("browser")
	b := cfg.Servers["browser"]
	b.Isolation = upstream.IsolationPerClient
	cfg.Servers["browser"] = b
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"browser": dial})
	srv := newTestServer(t, newTestRuntime(t, runtime.ModeTools), src, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	var oneNotes, twoNotes notes
	one := connectHTTP(t, ts.URL, oneNotes.options(), legacyProtocol)
	two := connectHTTP(t, ts.URL, twoNotes.options(), "")
	require.Eventually(t, func() bool {
		res, err := one.ListResources(t.Context(), nil)
		return err == nil && len(res.Resources) == 1
	}, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, one.Subscribe(t.Context(), &sdk.SubscribeParams{URI: "browser://page"}))
	var ofOne, ofTwo *featureServer
	require.Eventually(t, func() bool { ofOne = holding(); return ofOne != nil }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, two.Subscribe(t.Context(), &sdk.SubscribeParams{URI: "browser://page"}))
	require.Eventually(t, func() bool { ofTwo = holding(ofOne); return ofTwo != nil }, 10*time.Second, 10*time.Millisecond)

	count := func(n *notes) int {
		n.mu.Lock()
		defer n.mu.Unlock()
		return len(n.updated)
	}
	require.NoError(t, ofOne.Srv.ResourceUpdated(t.Context(), &sdk.ResourceUpdatedNotificationParams{URI: "browser://page"}))
	require.Eventually(t, func() bool { return count(&oneNotes) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, ofTwo.Srv.ResourceUpdated(t.Context(), &sdk.ResourceUpdatedNotificationParams{URI: "browser://page"}))
	require.Eventually(t, func() bool { return count(&twoNotes) >= 1 }, 10*time.Second, 10*time.Millisecond)
	// A leak is sent in the same loop as the update it copies, long before this ends.
	assert.Never(t, func() bool { return count(&oneNotes) > 1 || count(&twoNotes) > 1 }, 300*time.Millisecond, 10*time.Millisecond,
		"each client gets the update of its own instance and nothing else")
	oneNotes.mu.Lock()
	assert.Equal(t, []string{"browser://page"}, oneNotes.updated)
	oneNotes.mu.Unlock()
}

// routeServer is an upstream server that offers fixed features; nothing else of it is used.
type routeServer struct {
	seam.Server
	name string
	feat seam.Features
}

func (r *routeServer) Name() string            { return r.name }
func (r *routeServer) SourceName() string      { return r.name }
func (r *routeServer) Features() seam.Features { return r.feat }

type routeUpstream struct {
	seam.Upstream
	servers []seam.Server
}

func (r *routeUpstream) Servers() []seam.Server { return r.servers }

// FuzzResourceUpdateRouting: whatever URIs and templates two servers offer (colliding or not), a client subscribed
// by any URI that leads to a server's resource hears of that resource's updates: the URIs updated notifies for
// (server, own URI) include every URI that route maps to it.
func FuzzResourceUpdateRouting(f *testing.F) {
	f.Add("file:///shared.txt", "file:///shared.txt", "a://item/{id}", "toolsearch://a/a://item/7")
	f.Add("a://only", "b://r/1", "a://item/{id}", "a://item/7")
	f.Add("x://1", "x://1", "x://{n}", "toolsearch://b/x://1")
	f.Add("x://1", "y://1", "toolsearch://b/{rest}", "toolsearch://b/y://1")
	f.Fuzz(func(t *testing.T, uriA, uriB, templateA, seen string) {
		a := &routeServer{name: "a", feat: seam.Features{
			Resources: []*sdk.Resource{{URI: uriA, Name: "ra"}},
			Templates: []*sdk.ResourceTemplate{{URITemplate: templateA, Name: "ta"}},
		}}
		b := &routeServer{name: "b", feat: seam.Features{Resources: []*sdk.Resource{{URI: uriB, Name: "rb"}}}}
		s := &Server{up: &routeUpstream{servers: []seam.Server{a, b}}, log: slog.New(slog.DiscardHandler),
			sdk: sdk.NewServer(&sdk.Implementation{Name: "fuzz", Version: "1"}, nil)}
		s.mirror = newMirror(s)
		s.mirror.sync()

		candidates := []string{seen, uriA, uriB, namespaced("a", uriA), namespaced("b", uriB)}
		for _, uri := range candidates {
			u, own, ok := s.mirror.route(uri)
			if !ok {
				continue
			}
			require.Contains(t, []seam.Server{a, b}, u)
			notified := []string{own, namespaced(u.SourceName(), own)}
			assert.Contains(t, notified, uri, "a client subscribed by %q hears of updates of %s's %q", uri, u.Name(), own)
		}
	})
}
