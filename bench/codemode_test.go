package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dop251/goja"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/synthetic"
)

// Code-mode peers: the same four scripts, each the body of an async function using openclaw.tools, against the
// same Go bridge over a 500-tool catalog, in our sandbox (a fresh isolated instance per run), a Node child with
// the permission model and a stdio IPC bridge (what OpenClaw does), goja with Interrupt (pure Go, no memory
// limit). Every run is cold: nothing survives from one run to the next. fastschema/qjs's own Go API is not a peer:
// it cannot instantiate its module on the wazero this module uses (it compiles in one runtime and instantiates in
// another, which wazero 1.12 refuses), and its host mounts the working directory (see RATIONALE.md).
//
// There is no BenchmarkCodeModeSandboxPool: the sandbox has no warm pool (see RATIONALE.md), a snapshot restore
// is already the cold path.

var codeModeScripts = []struct{ name, code, want string }{
	{"trivial", "return 1", "1"},
	{"bridge", `const hits = await openclaw.tools.search("create an invoice for the customer", {limit: 5});
const d = await openclaw.tools.describe(hits[0].id);
const r = await openclaw.tools.call(d.id, {id: "42"});
return {id: d.id, echoed: r.details.id};`, ""}, // want filled in from the catalog
	{"cpu", `let s = 0;
for (let i = 0; i < 300000; i++) { s = (s + (i * i) % 7) | 0 }
return s;`, ""},
	{"json", `const rows = [];
for (let i = 0; i < 2000; i++) rows.push({id: i, name: "item" + i, tags: ["a", "b", String(i % 7)], price: i * 1.5});
const text = JSON.stringify(rows);
const out = JSON.parse(text).filter(r => r.tags[2] === "3").map(r => ({id: r.id, total: r.price * 2}));
return {count: out.length, bytes: text.length, last: out[out.length - 1]};`, ""},
}

// codeBridge answers openclaw.tools from a 500-tool catalog; a call echoes its arguments as details. All peers
// use this one implementation, so they differ only in how they run JavaScript and reach the host.
type codeBridge struct{ c *catalog.Catalog }

var sharedCodeBridge = sync.OnceValues(func() (codeBridge, error) {
	c, err := catalog.New(catalogTools(synthetic.Tools(500)), nil)
	return codeBridge{c}, err
})

func (b codeBridge) Search(ctx context.Context, req json.RawMessage) (json.RawMessage, error) {
	var r struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, err
	}
	hits, err := b.c.Search(ctx, r.Query, r.Limit)
	if err != nil {
		return nil, err
	}
	return json.Marshal(hits)
}

// request decodes a describe or call request as the script built it.
func request(payload json.RawMessage) (id string, args json.RawMessage, err error) {
	var r struct {
		ID   string          `json:"id"`
		Args json.RawMessage `json:"args"`
	}
	err = json.Unmarshal(payload, &r)
	return r.ID, r.Args, err
}

func (b codeBridge) Describe(_ context.Context, req json.RawMessage) (json.RawMessage, error) {
	id, _, err := request(req)
	if err != nil {
		return nil, err
	}
	d, err := b.c.Describe(id)
	if err != nil {
		return nil, err
	}
	return json.Marshal(d)
}

func (b codeBridge) Call(_ context.Context, req json.RawMessage) (json.RawMessage, error) {
	id, args, err := request(req)
	if err != nil {
		return nil, err
	}
	if _, err := b.c.Lookup(id); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"content": []any{}, "details": args})
}

// dispatch is the bridge as a single entry point, for peers whose host calls arrive as (op, JSON payload).
func (b codeBridge) dispatch(op string, payload json.RawMessage) (json.RawMessage, error) {
	ctx := context.Background()
	switch op {
	case "search":
		return b.Search(ctx, payload)
	case "describe":
		return b.Describe(ctx, payload)
	case "call":
		return b.Call(ctx, payload)
	}
	return nil, fmt.Errorf("unknown op %q", op)
}

func bridgeFor(tb testing.TB) codeBridge {
	tb.Helper()
	b, err := sharedCodeBridge()
	require.NoError(tb, err)
	return b
}

// wantFor computes a script's expected JSON result in Go, independently of any JavaScript engine.
func wantFor(tb testing.TB, name, want string) string {
	switch name {
	case "bridge":
		hits, err := bridgeFor(tb).c.Search(context.Background(), "create an invoice for the customer", 5)
		require.NoError(tb, err)
		return fmt.Sprintf(`{"id":%q,"echoed":"42"}`, hits[0].ID)
	case "cpu":
		s := int32(0)
		for i := range 300000 {
			s = s + int32((i*i)%7)
		}
		return fmt.Sprint(s)
	case "json":
		type row struct {
			ID    int      `json:"id"`
			Name  string   `json:"name"`
			Tags  []string `json:"tags"`
			Price float64  `json:"price"`
		}
		rows := make([]row, 2000)
		count, last := 0, 0
		for i := range rows {
			rows[i] = row{i, fmt.Sprint("item", i), []string{"a", "b", fmt.Sprint(i % 7)}, float64(i) * 1.5}
			if i%7 == 3 {
				count, last = count+1, i
			}
		}
		text, err := json.Marshal(rows)
		require.NoError(tb, err)
		return fmt.Sprintf(`{"count":%d,"bytes":%d,"last":{"id":%d,"total":%v}}`, count, len(text), last, float64(last)*3)
	}
	return want
}

// peerRun runs one script cold and returns its result as JSON plus the peak memory it needed (0 if unknown).
type peerRun func(ctx context.Context, code string) (json.RawMessage, uint64, error)

func sandboxPeer(tb testing.TB) peerRun {
	s, b := sandbox(tb), bridgeFor(tb)
	return func(ctx context.Context, code string) (json.RawMessage, uint64, error) {
		res, err := s.Run(ctx, code, b, nil)
		if err != nil {
			return nil, 0, err
		}
		return res.Value, res.Usage.MemoryBytes, nil
	}
}

// gojaPeer runs each script in a fresh goja runtime with the openclaw.tools surface bound to the bridge. goja is
// single-threaded, so host calls resolve their promises before returning; Interrupt enforces the deadline.
func gojaPeer(tb testing.TB) peerRun {
	b := bridgeFor(tb)
	return func(_ context.Context, code string) (json.RawMessage, uint64, error) {
		vm := goja.New()
		timer := time.AfterFunc(10*time.Second, func() { vm.Interrupt("timeout") })
		defer timer.Stop()
		invoke := func(op string, payload any) goja.Value {
			p, resolve, reject := vm.NewPromise()
			raw, err := json.Marshal(payload)
			var out json.RawMessage
			if err == nil {
				out, err = b.dispatch(op, raw)
			}
			if err != nil {
				_ = reject(vm.NewGoError(err))
			} else {
				var v any
				_ = json.Unmarshal(out, &v)
				_ = resolve(vm.ToValue(v))
			}
			return vm.ToValue(p)
		}
		tools := vm.NewObject()
		_ = tools.Set("search", func(q string, opts map[string]any) goja.Value {
			req := map[string]any{"query": q}
			for k, v := range opts {
				req[k] = v
			}
			return invoke("search", req)
		})
		_ = tools.Set("describe", func(id string) goja.Value { return invoke("describe", map[string]any{"id": id}) })
		_ = tools.Set("call", func(id string, args any) goja.Value {
			return invoke("call", map[string]any{"id": id, "args": args})
		})
		openclaw := vm.NewObject()
		_ = openclaw.Set("tools", tools)
		_ = vm.Set("openclaw", openclaw)
		v, err := vm.RunString("(async function () {\n" + code + "\n})().then(v => JSON.stringify(v === undefined ? null : v))")
		if err != nil {
			return nil, 0, err
		}
		p, ok := v.Export().(*goja.Promise)
		if !ok {
			return nil, 0, errors.New("goja: no promise")
		}
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return json.RawMessage(p.Result().String()), 0, nil
		case goja.PromiseStateRejected:
			return nil, 0, fmt.Errorf("goja: %v", p.Result())
		}
		return nil, 0, errors.New("goja: promise still pending")
	}
}

// nodeRunner is the child's side: openclaw.tools over stdio (one JSON line per request and per reply), the
// script compiled as an async function, the result printed as the last line.
const nodeRunner = `
const rl = require("readline").createInterface({ input: process.stdin });
const pending = new Map(); let next = 0;
rl.on("line", (line) => { const m = JSON.parse(line); const p = pending.get(m.id); pending.delete(m.id);
  if (m.ok) p.resolve(m.value); else p.reject(new Error(m.error)); });
function invoke(op, payload) {
  const id = ++next;
  return new Promise((resolve, reject) => { pending.set(id, { resolve, reject });
    process.stdout.write(JSON.stringify({ id, op, payload }) + "\n"); });
}
globalThis.openclaw = { tools: {
  search: (query, options) => invoke("search", Object.assign({}, options, { query })),
  describe: (id) => invoke("describe", { id }),
  call: (id, args) => invoke("call", { id, args: args === undefined ? {} : args }),
} };
const AsyncFunction = (async function () {}).constructor;
new AsyncFunction(process.argv[1])().then(
  (v) => { process.stdout.write(JSON.stringify({ done: true, value: v === undefined ? null : v }) + "\n"); process.exit(0); },
  (e) => { process.stdout.write(JSON.stringify({ done: true, error: String(e) }) + "\n"); process.exit(1); });
`

func nodePeer(tb testing.TB) peerRun {
	flag := nodePermissionFlag(tb)
	b := bridgeFor(tb)
	return func(ctx context.Context, code string) (json.RawMessage, uint64, error) {
		cmd := exec.CommandContext(ctx, "node", flag, "--no-warnings", "-e", nodeRunner, code)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, 0, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, 0, err
		}
		if err := cmd.Start(); err != nil {
			return nil, 0, err
		}
		defer func() { _ = cmd.Wait() }()
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 1<<20), 16<<20)
		for lines.Scan() {
			var m struct {
				ID      int             `json:"id"`
				Op      string          `json:"op"`
				Payload json.RawMessage `json:"payload"`
				Done    bool            `json:"done"`
				Value   json.RawMessage `json:"value"`
				Error   string          `json:"error"`
			}
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				return nil, 0, err
			}
			if m.Done {
				_ = stdin.Close()
				_ = cmd.Wait()
				var peak uint64
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					peak = uint64(ru.Maxrss) * 1024
				}
				if m.Error != "" {
					return nil, peak, errors.New(m.Error)
				}
				return m.Value, peak, nil
			}
			out, err := b.dispatch(m.Op, m.Payload)
			reply := map[string]any{"id": m.ID, "ok": err == nil, "value": out}
			if err != nil {
				reply["error"] = err.Error()
				delete(reply, "value")
			}
			line, _ := json.Marshal(reply)
			if _, err := io.WriteString(stdin, string(line)+"\n"); err != nil {
				return nil, 0, err
			}
		}
		return nil, 0, fmt.Errorf("node child ended without a result: %v", lines.Err())
	}
}

var codeModePeers = []struct {
	name string
	make func(testing.TB) peerRun
}{
	{"Sandbox", sandboxPeer},
	{"NodeChild", nodePeer},
	{"Goja", gojaPeer},
}

func TestCodeModePeersTwin(t *testing.T) {
	for _, peer := range codeModePeers {
		t.Run(peer.name, func(t *testing.T) {
			run := peer.make(t)
			for _, s := range codeModeScripts {
				t.Run(s.name, func(t *testing.T) {
					got, _, err := run(context.Background(), s.code)
					require.NoError(t, err)
					assert.JSONEq(t, wantFor(t, s.name, s.want), string(got))
				})
			}
		})
	}
}

// benchmarkCodeMode runs every script on one peer. inProcess peers also report CPU time per run: on a shared
// machine the wall clock counts waiting for a core too, and the sandbox-to-goja ratio is only meaningful in CPU
// (a Node child's CPU is not the process's, so it reports wall time only).
func benchmarkCodeMode(b *testing.B, make func(testing.TB) peerRun, inProcess bool) {
	run := make(b)
	for _, s := range codeModeScripts {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			var peak uint64
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				_, p, err := run(ctx, s.code)
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, p)
			}
			if inProcess {
				reportCPU(b, cpu)
			}
			if peak > 0 {
				b.ReportMetric(float64(peak), "peak-B")
			}
		})
	}
}

func BenchmarkCodeModeSandbox(b *testing.B)   { benchmarkCodeMode(b, sandboxPeer, true) }
func BenchmarkCodeModeNodeChild(b *testing.B) { benchmarkCodeMode(b, nodePeer, false) }
func BenchmarkCodeModeGoja(b *testing.B)      { benchmarkCodeMode(b, gojaPeer, true) }
