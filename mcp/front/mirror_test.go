package front

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
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
