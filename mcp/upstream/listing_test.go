package upstream

import (
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostilePages is how many pages a hostile listing offers: as many as a listing may have.
const hostilePages = MaxToolsPerServer

// hostileListing answers tools/list with an endless supply of pages just under MaxMessageBytes:
//   - bigpages: each page holds one small tool and fourteen tools over MaxToolBytes (a 1.1 MiB description);
//   - bomb: each page holds seventy tools whose schemas are within every per-tool bound but are arrays of empty
//     objects, the JSON that costs most to decode (about 35 times its size as map[string]any).
//
// Each page is built when asked for, so the child never holds more than one.
func hostileListing(kind string) func(method string, id, params json.RawMessage) string {
	description := strings.Repeat("d", 1100<<10)
	bombSchema := `{"type":"object","x":[` + strings.Repeat("{},", 73<<10) + `{}]}`
	return func(method string, id, params json.RawMessage) string {
		if method != "tools/list" {
			return ""
		}
		var p struct{ Cursor string }
		_ = json.Unmarshal(params, &p)
		var page int
		fmt.Sscanf(p.Cursor, "page-%d", &page)
		var b strings.Builder
		b.WriteString(`{"tools":[`)
		switch kind {
		case "bigpages":
			fmt.Fprintf(&b, `{"name":"good_%d","inputSchema":{"type":"object"}}`, page)
			for i := range 14 {
				fmt.Fprintf(&b, `,{"name":"huge_%d_%d","description":"%s","inputSchema":{"type":"object"}}`, page, i, description)
			}
		case "bomb":
			for i := range 70 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"name":"bomb_%d_%d","inputSchema":%s}`, page, i, bombSchema)
			}
		}
		b.WriteString(`]`)
		if page+1 < hostilePages {
			fmt.Fprintf(&b, `,"nextCursor":"page-%d"`, page+1)
		}
		b.WriteString(`}`)
		return result(id, b.String())
	}
}

// heapSampler records the largest heap (live objects and not yet collected garbage) while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(h.done)
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

// A server offering a thousand pages of 15 MiB (15 GB) costs the host a bounded amount: oversized tools are
// dropped from each page before anything of them is decoded, and the listing stops once MaxListingBytes have
// arrived. The servers are child processes, so the host's heap holds only what the Source keeps.
func TestHostileListingsStayBounded(t *testing.T) {
	requireProc(t)
	if raceEnabled {
		t.Skip("measures the heap, which the race detector multiplies; the filter's concurrency is covered by the other listing tests")
	}
	tests := []struct {
		kind       string
		wantTools  func(t *testing.T, names []string)
		wantReport string
	}{
		{"bigpages", func(t *testing.T, names []string) {
			assert.Equal(t, []string{"mcp:bigpages:good_0", "mcp:bigpages:good_1"}, names,
				"the small tool of each page read is kept, the huge ones are not")
		}, `skipping tool "huge_0_0": its definition is`},
		{"bomb", func(t *testing.T, names []string) {
			// Each bomb tool is about 219 KiB: the listing keeps what fits in MaxListingBytes.
			assert.Len(t, names, MaxListingBytes/(219<<10))
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			goruntime.GC()
			var before, after goruntime.MemStats
			goruntime.ReadMemStats(&before)
			heap := sampleHeap()
			progress := &syncBuffer{}
			opts := fastOptions(progress)
			opts.StartTimeout = time.Minute
			began := time.Now()
			src := newChildSource(t, map[string]ServerConfig{tc.kind: childConfig(tc.kind)}, opts)
			took := time.Since(began)
			peak := heap.Stop()
			goruntime.ReadMemStats(&after)

			st := src.Status()[0]
			require.Equal(t, StateReady, st.State, "%v\n%s", st.Err, progress.String())
			tc.wantTools(t, names(src))
			assert.Contains(t, progress.String(), fmt.Sprintf("the listing passed %d bytes", MaxListingBytes))
			if tc.wantReport != "" {
				assert.Contains(t, progress.String(), tc.wantReport)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: listed in %s; host heap peak %d MiB, %d MiB allocated in all", tc.kind,
				took.Round(time.Millisecond), peak>>20, allocated>>20)
			// The server offered 15 GB; decoded as before, the bomb's first two pages alone would hold about 1 GB.
			// Most of what is allocated is garbage of the SDK's own framing, about 8 times each message it reads.
			assert.Less(t, peak, uint64(16*MaxListingBytes), "host heap peak")
			assert.Less(t, allocated, uint64(48*MaxListingBytes), "host allocation")
		})
	}
}

// Everything a kept tool holds counts against MaxListingBytes (and a cached listing's bound), whichever field
// carries it.
func TestListingCountsEveryField(t *testing.T) {
	big := strings.Repeat("m", 1000)
	quoted := json.RawMessage(`"` + big + `"`)
	for _, rt := range []remoteTool{
		{Name: big}, {Title: big}, {Description: big}, {InputSchema: quoted}, {OutputSchema: quoted},
		{Meta: quoted}, {Icons: quoted}, {Annotations: &remoteAnnotations{Title: big}},
	} {
		assert.GreaterOrEqual(t, rt.size(), len(big), "%+v", rt.Annotations)
	}
}
