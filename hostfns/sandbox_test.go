package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolsearch/toolsearch/internal/jsprep"
	"github.com/toolsearch/toolsearch/wasm"
)

var sharedSandbox = sync.OnceValues(func() (*Sandbox, error) { return New(context.Background(), nil) })

func sandbox(t testing.TB) *Sandbox {
	t.Helper()
	s, err := sharedSandbox()
	require.NoError(t, err)
	return s
}

// fakeBridge records every call that reaches the host and answers from a tiny catalog. delay makes calls slow;
// block makes Call wait for its context (or for release, if ignoreCtx).
type fakeBridge struct {
	delay     time.Duration
	ignoreCtx bool
	release   chan struct{}

	mu          sync.Mutex
	calls       []string
	inFlight    atomic.Int32
	maxInFlight atomic.Int32
}

func (b *fakeBridge) record(s string) {
	b.mu.Lock()
	b.calls = append(b.calls, s)
	b.mu.Unlock()
}

func (b *fakeBridge) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

func (b *fakeBridge) enter() func() {
	n := b.inFlight.Add(1)
	for {
		m := b.maxInFlight.Load()
		if n <= m || b.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { b.inFlight.Add(-1) }
}

func (b *fakeBridge) wait(ctx context.Context) error {
	if b.release != nil {
		if b.ignoreCtx {
			<-b.release
			return nil
		}
		select {
		case <-b.release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if b.delay > 0 {
		select {
		case <-time.After(b.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (b *fakeBridge) Search(ctx context.Context, req json.RawMessage) (json.RawMessage, error) {
	b.record("search " + string(req))
	return json.RawMessage(`[{"id":"openclaw:core:web_search","name":"web_search"}]`), nil
}

// idAndArgs decodes a describe or call request the way a plain bridge would; the runtime's is more forgiving.
func idAndArgs(request json.RawMessage) (string, json.RawMessage, error) {
	var r struct {
		ID   string          `json:"id"`
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(request, &r); err != nil || r.ID == "" {
		return "", nil, fmt.Errorf("bad request %s", request)
	}
	if len(r.Args) == 0 {
		r.Args = json.RawMessage("{}")
	}
	return r.ID, r.Args, nil
}

func (b *fakeBridge) Describe(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	id, _, err := idAndArgs(request)
	if err != nil {
		return nil, err
	}
	b.record("describe " + id)
	if id != "openclaw:core:web_search" {
		return nil, fmt.Errorf("Unknown tool id: %s", id)
	}
	return json.RawMessage(`{"id":"openclaw:core:web_search","parameters":{"type":"object"}}`), nil
}

func (b *fakeBridge) Call(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	id, args, err := idAndArgs(request)
	if err != nil {
		return nil, err
	}
	defer b.enter()()
	b.record("call " + id + " " + string(args))
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	switch id {
	case "fail":
		return nil, errors.New("tool exploded")
	case "panic":
		panic("bridge bug")
	case "big":
		return json.RawMessage(`"` + strings.Repeat("x", 2<<20) + `"`), nil
	case "garbage":
		return json.RawMessage(`{not json`), nil
	}
	return json.RawMessage(`{"tool":"` + id + `","args":` + string(args) + `}`), nil
}

func run(t *testing.T, code string, b Bridge, opts *RunOptions) (*Result, error) {
	t.Helper()
	if b == nil {
		b = &fakeBridge{}
	}
	return sandbox(t).Run(context.Background(), code, b, opts)
}

func requireKind(t *testing.T, err error, kind string) ErrorInfo {
	t.Helper()
	require.Error(t, err)
	info := Describe(err)
	require.Equal(t, kind, info.Kind, "%v", err)
	return info
}

func TestReturnValues(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"return 1", "1"},
		{"return", "null"},
		{"return undefined", "null"},
		{"return {a: [1, 'two', null], b: undefined}", `{"a":[1,"two",null]}`},
		{"return () => 1", "null"},
		{"const x = await Promise.resolve(41); return x + 1", "42"},
		{"return 'line\\nbreak \\u0000 nul'", `"line\nbreak \u0000 nul"`},
	} {
		t.Run(tc.code, func(t *testing.T) {
			res, err := run(t, tc.code, nil, nil)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(res.Value))
		})
	}
}

func TestConsole(t *testing.T) {
	res, err := run(t, `console.log('hi', 1, {a: 1}, [2], null, undefined, 3n, Symbol('s'));
		console.warn('careful'); console.error(new TypeError('bad'));
		return typeof console.info`, nil, nil)
	require.NoError(t, err)
	require.Len(t, res.Logs, 3)
	assert.Equal(t, `hi 1 {"a":1} [2] null undefined 3n Symbol(s)`, res.Logs[0])
	assert.Equal(t, "[warn] careful", res.Logs[1])
	assert.True(t, strings.HasPrefix(res.Logs[2], "[error] TypeError: bad\n"), res.Logs[2])
	assert.JSONEq(t, `"undefined"`, string(res.Value), "only log, warn and error exist")
}

func TestGlobalsAreOnlyTheSurface(t *testing.T) {
	res, err := run(t, `return Object.getOwnPropertyNames(globalThis).filter(n => ![
		'Object','Function','Error','EvalError','RangeError','ReferenceError','SyntaxError','TypeError','URIError',
		'InternalError','AggregateError','Iterator','Array','parseInt','parseFloat','isNaN','isFinite','queueMicrotask',
		'decodeURI','decodeURIComponent','encodeURI','encodeURIComponent','escape','unescape','Infinity','NaN',
		'undefined','Number','Boolean','String','Math','Reflect','Symbol','eval','globalThis','Date','RegExp','JSON',
		'Proxy','Map','Set','WeakMap','WeakSet','ArrayBuffer','SharedArrayBuffer','Uint8ClampedArray','Int8Array',
		'Uint8Array','Int16Array','Uint16Array','Int32Array','Uint32Array','BigInt64Array','BigUint64Array',
		'Float16Array','Float32Array','Float64Array','DataView','Promise','BigInt','WeakRef','FinalizationRegistry',
		'DOMException'].includes(n)).sort()`, nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `["clearInterval","clearTimeout","console","crypto","navigator","openclaw","performance","setInterval","setTimeout"]`, string(res.Value))
}

func TestBridgeRoundTrip(t *testing.T) {
	b := &fakeBridge{}
	res, err := run(t, `
		const hits = await openclaw.tools.search('find the web', {limit: 3});
		const batch = await openclaw.tools.search({queries: ['a', 'b']});
		const short = await openclaw.tools.search('x', 2);
		const d = await openclaw.tools.describe(hits[0].id);
		const r = await openclaw.tools.call(d.id, {query: 'go'});
		const noArgs = await openclaw.tools.call(d.id);
		return {hits, d, r, noArgs, n: batch.length + short.length}`, b, nil)
	require.NoError(t, err)
	assert.Equal(t, 6, res.Calls)
	assert.JSONEq(t, `{"hits":[{"id":"openclaw:core:web_search","name":"web_search"}],
		"d":{"id":"openclaw:core:web_search","parameters":{"type":"object"}},
		"r":{"tool":"openclaw:core:web_search","args":{"query":"go"}},
		"noArgs":{"tool":"openclaw:core:web_search","args":{}}, "n": 2}`, string(res.Value))
	assert.Equal(t, []string{
		`search {"limit":3,"query":"find the web"}`,
		`search {"queries":["a","b"]}`,
		`search {"limit":2,"query":"x"}`,
		`describe openclaw:core:web_search`,
		`call openclaw:core:web_search {"query":"go"}`,
		`call openclaw:core:web_search {}`,
	}, b.seen())
}

func TestBridgeErrorsRejectInsideTheScript(t *testing.T) {
	res, err := run(t, `
		const out = [];
		for (const id of ['fail', 'panic', 'big', 'garbage', 'nope']) {
			try { await (id === 'nope' ? openclaw.tools.describe(id) : openclaw.tools.call(id)); out.push('ok') }
			catch (e) { out.push(e.message) }
		}
		try { await openclaw.tools.call('x', {big: 'y'.repeat(2 << 20)}) } catch (e) { out.push(e.message) }
		try { await openclaw.tools.call('x', {n: 1n}) } catch (e) { out.push(e.message) }
		try { await openclaw.tools.describe(42) } catch (e) { out.push(e.message) }
		return out`, nil, nil)
	require.NoError(t, err)
	var msgs []string
	require.NoError(t, json.Unmarshal(res.Value, &msgs))
	require.Len(t, msgs, 8)
	assert.Equal(t, "tool exploded", msgs[0])
	assert.Contains(t, msgs[1], "internal error (bridge bug)")
	assert.Contains(t, msgs[2], "result is 2097154 bytes, over the 1048576 byte limit")
	assert.Contains(t, msgs[3], "invalid JSON")
	assert.Equal(t, "Unknown tool id: nope", msgs[4])
	assert.Contains(t, msgs[5], "request is 2097180 bytes, over the 1048576 byte limit")
	assert.Contains(t, msgs[6], "not JSON-serializable")
	assert.Equal(t, `bad request {"id":42}`, msgs[7], "the request reaches the bridge as the script built it")
}

// Calls started together run together on the host: the fake bridge sees all four in flight at once.
func TestConcurrentCalls(t *testing.T) {
	b := &fakeBridge{delay: 100 * time.Millisecond}
	res, err := run(t, `return (await Promise.all([1, 2, 3, 4].map(i => openclaw.tools.call('t', {i})))).length`, b, nil)
	require.NoError(t, err)
	assert.JSONEq(t, "4", string(res.Value))
	assert.EqualValues(t, 4, b.maxInFlight.Load(), "all four calls were in flight at the same time")
	t.Logf("Promise.all of 4 x 100 ms calls: %v wall", res.Usage.Wall)
}

func TestRunWaitsForEveryCall(t *testing.T) {
	b := &fakeBridge{delay: 50 * time.Millisecond}
	res, err := run(t, `openclaw.tools.call('t', {fire: 'and forget'}).then(r => console.log('done', r.args.fire)); return 'early'`, b, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"early"`, string(res.Value))
	assert.Equal(t, []string{"done and forget"}, res.Logs, "the call settled and its callback ran before Run returned")
	assert.EqualValues(t, 0, b.inFlight.Load())
}

func TestScriptFailures(t *testing.T) {
	t.Run("syntax error with line", func(t *testing.T) {
		_, err := run(t, "const a = 1;\nconst b = ;", nil, nil)
		info := requireKind(t, err, "syntax")
		assert.Equal(t, 2, info.Line)
	})
	t.Run("exception with line and stack", func(t *testing.T) {
		_, err := run(t, "\n\nnull.x", nil, nil)
		info := requireKind(t, err, "exception")
		assert.Equal(t, 3, info.Line)
		assert.Contains(t, info.Message, "cannot read property 'x' of null")
		assert.Contains(t, info.Stack, "<input>:3")
	})
	t.Run("exception after await", func(t *testing.T) {
		_, err := run(t, "await openclaw.tools.search('x');\nthrow new Error('after')", nil, nil)
		info := requireKind(t, err, "exception")
		assert.Equal(t, 2, info.Line)
		assert.Equal(t, "Error: after (line 2)", info.Message)
	})
	t.Run("thrown non-error", func(t *testing.T) {
		_, err := run(t, "throw {code: 7}", nil, nil)
		info := requireKind(t, err, "exception")
		assert.Equal(t, `Uncaught {"code":7}`, info.Message)
	})
	t.Run("unserializable result", func(t *testing.T) {
		_, err := run(t, "const a = {}; a.self = a; return a", nil, nil)
		info := requireKind(t, err, "exception")
		assert.Contains(t, info.Message, "not JSON-serializable")
	})
	t.Run("never settles", func(t *testing.T) {
		res, err := run(t, "await new Promise(() => {})", nil, &RunOptions{Timeout: 5 * time.Second})
		info := requireKind(t, err, "exception")
		assert.Contains(t, info.Message, "never resolve")
		assert.Less(t, res.Usage.Wall, 5*time.Second, "ends when nothing is left to do, not at the deadline")
	})
	t.Run("breaking out of the function", func(t *testing.T) {
		_, err := run(t, "}); (function () {", nil, nil)
		require.Error(t, err)
	})
}

func TestLimits(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		_, err := run(t, "while (true) {}", nil, &RunOptions{Timeout: 200 * time.Millisecond})
		requireKind(t, err, "timeout")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("timeout after an async continuation", func(t *testing.T) {
		b := &fakeBridge{}
		_, err := run(t, "await openclaw.tools.search('x'); while (true) {}", b, &RunOptions{Timeout: 200 * time.Millisecond})
		requireKind(t, err, "timeout")
		assert.Len(t, b.seen(), 1)
	})
	t.Run("fuel", func(t *testing.T) {
		_, err := run(t, "for (;;) {}", nil, &RunOptions{Fuel: 1_000_000})
		requireKind(t, err, "fuel")
	})
	t.Run("memory", func(t *testing.T) {
		_, err := run(t, "return new Array(1e9).fill(0).length", nil, nil)
		requireKind(t, err, "memory")
		_, err = run(t, "let s = 'x'; for (;;) s += s", nil, nil)
		requireKind(t, err, "memory")
	})
	t.Run("stack", func(t *testing.T) {
		// A minute, not the default 10 s: on a machine whose cores other work holds, growing the stack to the
		// limit took longer than that, and the run ended as a timeout.
		long := &RunOptions{Timeout: time.Minute}
		_, err := run(t, "function f() { return f() } return f()", nil, long)
		requireKind(t, err, "stack")
		_, err = run(t, "return JSON.parse('['.repeat(100000) + ']'.repeat(100000))", nil, long)
		requireKind(t, err, "stack")
		res, err := run(t, "return 'fine'", nil, nil)
		require.NoError(t, err, "the next run on the same sandbox works")
		assert.JSONEq(t, `"fine"`, string(res.Value))
	})
	t.Run("100 MB of console output", func(t *testing.T) {
		res, err := run(t, "const line = 'x'.repeat(1 << 20); for (let i = 0; i < 100; i++) console.log(line)", nil, nil)
		info := requireKind(t, err, "output")
		assert.Contains(t, info.Message, "65536 bytes")
		assert.Empty(t, res.Logs, "nothing past the limit is kept")
		_, err = run(t, "for (;;) console.log('spam')", nil, &RunOptions{MaxOutputBytes: 1000})
		requireKind(t, err, "output")
	})
	t.Run("result bytes", func(t *testing.T) {
		_, err := run(t, "return 'x'.repeat(2000)", nil, &RunOptions{MaxResultBytes: 1000})
		requireKind(t, err, "result")
	})
	t.Run("10 MB source", func(t *testing.T) {
		code := "return 1 //" + strings.Repeat("x", 10<<20)
		res, err := run(t, code, nil, nil)
		info := requireKind(t, err, "source")
		assert.Contains(t, info.Message, "over the 262144 byte limit")
		assert.Zero(t, res.Usage.Fuel, "refused before the sandbox ran")
	})
	t.Run("calls", func(t *testing.T) {
		b := &fakeBridge{}
		res, err := run(t, "for (let i = 0; ; i++) await openclaw.tools.search('q' + i)", b, &RunOptions{MaxCalls: 5})
		requireKind(t, err, "calls")
		assert.Equal(t, 5, res.Calls)
		assert.Len(t, b.seen(), 5, "the call over the limit never reached the host")
	})
}

func TestDeadlineCutsOffBlockedBridgeCalls(t *testing.T) {
	t.Run("bridge honours its context", func(t *testing.T) {
		b := &fakeBridge{release: make(chan struct{})}
		res, err := run(t, "return await openclaw.tools.call('slow')", b, &RunOptions{Timeout: 200 * time.Millisecond})
		requireKind(t, err, "timeout")
		assert.EqualValues(t, 0, b.inFlight.Load(), "the call was cancelled and returned before Run did")
		assert.Less(t, res.Usage.Wall, 3*time.Second)
	})
	t.Run("bridge ignores its context", func(t *testing.T) {
		b := &fakeBridge{release: make(chan struct{}), ignoreCtx: true}
		defer close(b.release)
		start := time.Now()
		_, err := run(t, "return await openclaw.tools.call('stuck')", b, &RunOptions{Timeout: 200 * time.Millisecond})
		requireKind(t, err, "timeout")
		assert.Less(t, time.Since(start), 3*time.Second, "Run returns even though the bridge never does")
	})
}

func TestHostileScripts(t *testing.T) {
	for name, tc := range map[string]struct{ code, want string }{
		"read /etc/passwd": {"const std = await import('qjs:std'); return String(std.open('/etc/passwd', 'r'))", `"null"`},
		"list /":           {"const os = await import('qjs:os'); return os.readdir('/')[0]", `[]`},
		"read env":         {"const std = await import('qjs:std'); return std.getenviron()", `{}`},
		"exec":             {"const os = await import('qjs:os'); return typeof os.exec", `"undefined"`},
		"sleep":            {"const os = await import('qjs:os'); const t = Date.now(); os.sleep(30000); return Date.now() - t >= 30000", `true`},
		"eval escape":      {"return eval('typeof std') + (0, eval)('typeof os') + new Function('return typeof print')()", `"undefinedundefinedundefined"`},
		"globalThis proto": {"return Object.getPrototypeOf(globalThis) === Object.prototype", `true`},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := run(t, tc.code, nil, &RunOptions{Timeout: 5 * time.Second})
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(res.Value))
		})
	}
}

// Whatever a script does to the prelude's objects, the only way to the host is the bridge: every attempt below
// either fails inside the script or arrives as an ordinary, checked bridge call.
func TestTamperingCannotBypassTheBridge(t *testing.T) {
	b := &fakeBridge{}
	res, err := run(t, `
		const out = {};
		openclaw.tools.call = async () => 'hijacked';
		openclaw.tools = {};
		globalThis.openclaw = {};
		out.frozen = openclaw.tools.call.name;
		out.raw = [typeof __ts_log, typeof __ts_start, typeof __ts_wait, typeof __ts_settle, typeof __ts_idle,
			typeof __ts_boot, typeof globalThis.__ts_start, Object.getOwnPropertyNames(globalThis).filter(n => n.startsWith('__ts'))];
		Promise.prototype.then = function () { out.then = 'hijacked'; return this };
		Function.prototype.call = function () { out.fcall = 'hijacked' };
		JSON.parse = () => ({hijacked: true});
		Map.prototype.get = () => undefined;
		const r = await openclaw.tools.call('openclaw:core:web_search', {q: 1});
		out.tool = r.tool;
		return out`, b, nil)
	require.NoError(t, err)
	var out struct {
		Frozen string
		Raw    []any
		Tool   string
		Then   string
		Fcall  string
	}
	require.NoError(t, json.Unmarshal(res.Value, &out))
	assert.Equal(t, "call", out.Frozen, "openclaw and openclaw.tools are frozen")
	assert.Equal(t, []any{"undefined", "undefined", "undefined", "undefined", "undefined", "undefined", "undefined", []any{}},
		out.Raw, "no raw host function, nor the boot hook, is reachable from the script")
	assert.Equal(t, "openclaw:core:web_search", out.Tool, "the prelude keeps working with hijacked built-ins")
	// The single call the script made went through the bridge like any other.
	assert.Equal(t, []string{`call openclaw:core:web_search {"q":1}`}, b.seen())
}

// An index setter on Array.prototype used to catch the argument lists the prelude built for host calls: it padded
// one console.log with 65,000 references to a 1 MiB string (3.8 GiB of host memory), or pointed the call at the
// settle function so that console.log settled the run with text that is not JSON.
func TestArrayPrototypeSettersCannotReachHostCalls(t *testing.T) {
	// The old prelude assigned a host call's arguments at indices 4 and up.
	for i := 4; i < 8; i++ {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			res, err := run(t, fmt.Sprintf(`
				let seen = 0;
				Object.defineProperty(Array.prototype, %[1]d, {
					set(v) { seen++; this.length = 70000; this.fill('x'.repeat(1 << 20), 6); this[0] = 3 },
					get() { return undefined }, configurable: true,
				});
				console.log('not json {');
				const r = await openclaw.tools.search('q');
				return {seen, hits: r.length}`, i), nil, nil)
			require.NoError(t, err)
			assert.JSONEq(t, `{"seen":0,"hits":1}`, string(res.Value), "the setter never saw a host call's arguments")
			assert.Equal(t, []string{"not json {"}, res.Logs)
		})
	}
}

func TestRunsAreIsolated(t *testing.T) {
	_, err := run(t, "globalThis.secret = 'run one'; Object.prototype.leak = 1; return 1", nil, nil)
	require.NoError(t, err)
	res, err := run(t, "return [typeof secret, ({}).leak === undefined]", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `["undefined", true]`, string(res.Value))
}

func TestParallelRunsAndNoLeaks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	vals := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &fakeBridge{delay: time.Millisecond}
			// Two hundred runs at once on a machine whose cores other work holds took longer than the default
			// 10 s each; the test is about isolation and leaks, so the timeout is out of its way.
			res, err := sandbox(t).Run(context.Background(),
				fmt.Sprintf("globalThis.mine = %d; const r = await openclaw.tools.call('t', {i: %d}); return [mine, r.args.i]", i, i), b,
				&RunOptions{Timeout: 5 * time.Minute})
			errs[i] = err
			if err == nil {
				vals[i] = string(res.Value)
			}
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.JSONEq(t, fmt.Sprintf("[%d,%d]", i, i), vals[i])
	}
}

func TestFuelIsDeterministicWithBridgeCalls(t *testing.T) {
	code := "let n = 0; for (let i = 0; i < 5; i++) { const h = await openclaw.tools.search('q' + i); n += h.length } return n"
	var first uint64
	for i := range 4 {
		res, err := run(t, code, nil, nil)
		require.NoError(t, err)
		if i == 0 {
			first = res.Usage.Fuel
		}
		assert.Equal(t, first, res.Usage.Fuel)
	}
}

func TestNewRejectsEngineHooks(t *testing.T) {
	_, err := New(context.Background(), &Options{Engine: wasm.Options{Prelude: "1"}})
	require.ErrorIs(t, err, wasm.ErrStartup)
	_, err = sandbox(t).Run(context.Background(), "return 1", nil, nil)
	require.Error(t, err)
}

func TestDescribeKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind string
	}{
		{wasm.NewLimitError(wasm.LimitCalls, 1, 2), "calls"},
		{&wasm.ScriptError{Name: "SyntaxError", Message: "x"}, "syntax"},
		{&wasm.ScriptError{Name: "Error", Message: "x"}, "exception"},
		{fmt.Errorf("%w (exit code 1)", wasm.ErrExit), "exit"},
		{context.Canceled, "canceled"},
		{fmt.Errorf("%w: no", wasm.ErrStartup), "unavailable"},
		{errors.New("boom"), "internal"},
	} {
		assert.Equal(t, tc.kind, Describe(tc.err).Kind, tc.err.Error())
	}
}

// The bridge's byte budget covers requests and responses together; past it, calls are rejected inside the
// script, which goes on.
func TestBridgeBudget(t *testing.T) {
	b := &fakeBridge{}
	res, err := run(t, `
		const p = 'x'.repeat(100000); let ok = 0, refused = '';
		for (let i = 0; i < 20; i++) {
			try { await openclaw.tools.call('echo', {p}); ok++ } catch (e) { refused = e.message }
		}
		return {ok, refused}`, b, &RunOptions{MaxBridgeBytes: 1 << 20})
	require.NoError(t, err)
	var out struct {
		OK      int
		Refused string
	}
	require.NoError(t, json.Unmarshal(res.Value, &out))
	// Each call sends ~100 KB and gets ~100 KB back: five fit in 1 MiB.
	assert.Equal(t, 5, out.OK)
	assert.Contains(t, out.Refused, "1048576 byte budget")
	assert.Equal(t, 5, len(b.seen()), "the sixth request would go over the budget: it never reaches the bridge")
}

// A script that never waits while its calls finish: results stay on the host only up to the budget, and go back
// in batches of about one payload.
func TestResultsGoBackInBoundedBatches(t *testing.T) {
	res, err := run(t, `
		const p = 'y'.repeat(300000);
		const all = await Promise.all(Array.from({length: 8}, (_, i) => openclaw.tools.call('echo', {p, i})));
		return all.length`, nil, &RunOptions{MaxPayloadBytes: 400000, MaxBridgeBytes: 8 << 20})
	require.NoError(t, err)
	assert.JSONEq(t, "8", string(res.Value))
	st := newRunState(context.Background(), &fakeBridge{}, RunOptions{MaxPayloadBytes: 1000}.withDefaults())
	for range 5 {
		_, err := st.calls.start(context.Background(), "call", `{"id":"echo","args":{"p":"`+strings.Repeat("z", 300)+`"}}`)
		require.NoError(t, err)
	}
	st.calls.running.Wait()
	var sizes []int
	for st.calls.outstanding() > 0 {
		batch, err := st.calls.wait(context.Background())
		require.NoError(t, err)
		require.True(t, json.Valid([]byte(batch)))
		sizes = append(sizes, len(batch))
	}
	assert.Greater(t, len(sizes), 1, "five results of ~330 bytes do not go back in one 1000-byte batch")
	for _, n := range sizes {
		assert.LessOrEqual(t, n, 1000+400, "a batch holds about one payload")
	}
}

// Searches and describes stop at MaxHostTime of host CPU; the run goes on and says why.
func TestHostTimeBudget(t *testing.T) {
	busy := &busyLookups{cost: 30 * time.Millisecond}
	res, err := run(t, `
		let ok = 0, refused = '';
		for (let i = 0; i < 20; i++) {
			try { await openclaw.tools.search('q' + i); ok++ } catch (e) { refused = e.message }
		}
		return {ok, refused}`, busy, &RunOptions{MaxHostTime: 100 * time.Millisecond, Timeout: time.Minute})
	require.NoError(t, err)
	var out struct {
		OK      int
		Refused string
	}
	require.NoError(t, json.Unmarshal(res.Value, &out))
	assert.LessOrEqual(t, out.OK, 4, "about 100 ms of 30 ms searches")
	assert.Contains(t, out.Refused, "used its 100ms of host CPU time")
	assert.LessOrEqual(t, busy.calls.Load(), int32(out.OK+1), "refused searches never reach the bridge")
	busy.requireSpent(t, 100*time.Millisecond)
	assert.EqualValues(t, 1, busy.maxConcurrent.Load(), "searches of one run go one at a time")
}

// Without MaxHostTime, searches and describes get DefaultHostTimeShare of the timeout: 500 ms of a 10 s run.
func TestHostTimeBudgetDefaultsToAShareOfTheTimeout(t *testing.T) {
	busy := &busyLookups{cost: 40 * time.Millisecond}
	res, err := run(t, `
		let ok = 0, refused = '';
		for (let i = 0; i < 30 && !refused; i++) {
			try { await openclaw.tools.search('q' + i); ok++ } catch (e) { refused = e.message }
		}
		return {ok, refused}`, busy, &RunOptions{Timeout: 10 * time.Second})
	require.NoError(t, err)
	var out struct {
		OK      int
		Refused string
	}
	require.NoError(t, json.Unmarshal(res.Value, &out))
	budget := 10 * time.Second * DefaultHostTimeShare / 100
	assert.Contains(t, out.Refused, fmt.Sprintf("used its %v of host CPU time", budget))
	assert.LessOrEqual(t, out.OK, 13, "about 500 ms of 40 ms searches")
	busy.requireSpent(t, budget)
}

// One search that would compute for ever is cut once it has spent what is left of the budget.
func TestHostTimeBudgetCutsALongSearch(t *testing.T) {
	busy := &busyLookups{cost: time.Hour}
	res, err := run(t, `try { await openclaw.tools.search('q'); return 'answered' } catch (e) { return e.message }`,
		busy, &RunOptions{MaxHostTime: 100 * time.Millisecond, Timeout: time.Minute})
	require.NoError(t, err)
	assert.Contains(t, string(res.Value), "used its 100ms of host CPU time")
	busy.requireSpent(t, 100*time.Millisecond)
}

// A cheap script on a machine whose cores other processes hold (started here: four per core): its searches wait
// for a core several times longer than they compute, and only the computing counts against the budget. The
// searches' wall time is the control: it is over the budget, which is what a wall-clock budget counted and
// blamed the script for.
func TestHostTimeBudgetIgnoresWaitingForACore(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux reads a thread's CPU clock; elsewhere host time is wall time")
	}
	startHogs(t, 4*runtime.NumCPU())
	budget := 200 * time.Millisecond
	busy := &busyLookups{cost: 10 * time.Millisecond}
	res, err := run(t, `
		let ok = 0, refused = '';
		for (let i = 0; i < 10; i++) {
			try { await openclaw.tools.search('q' + i); ok++ } catch (e) { refused = e.message }
		}
		return {ok, refused}`, busy, &RunOptions{MaxHostTime: budget, Timeout: time.Minute})
	require.NoError(t, err)
	var out struct {
		OK      int
		Refused string
	}
	require.NoError(t, json.Unmarshal(res.Value, &out))
	wall := time.Duration(busy.wall.Load())
	t.Logf("10 searches of 10 ms CPU beside %d busy processes: %v of wall time, budget %v", 4*runtime.NumCPU(), wall, budget)
	assert.Equal(t, 10, out.OK, "refused: %s", out.Refused)
	assert.Empty(t, out.Refused)
	assert.Greater(t, wall, budget, "the busy processes did not make the searches wait: the test shows nothing")
}

// hogEnv makes this test binary spin instead of running tests: startHogs starts it as a busy process.
const hogEnv = "HOSTFNS_TEST_SPIN"

func init() {
	if os.Getenv(hogEnv) == "1" {
		for {
		}
	}
}

// startHogs starts n processes that keep a core busy until the test ends, and ends them by their pids.
func startHogs(t *testing.T, n int) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	for range n {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), hogEnv+"=1")
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}

// busyLookups is a bridge whose searches compute for cost of their thread's CPU time (honouring their context),
// and record the CPU and wall time they took and how many overlap.
type busyLookups struct {
	fakeBridge
	cost                      time.Duration
	calls, now, maxConcurrent atomic.Int32
	cpu, wall                 atomic.Int64 // nanoseconds the searches took, as the bridge saw them
}

// requireSpent checks that searches were refused only once they had computed about budget. It counts the CPU
// the searches really took, not how many fit. The host measures a search from just before the bridge to just
// after it, so it counts at least what the bridge saw; a quarter of the budget is left for that overhead, and a
// budget counted twice (or cut short) still fails.
func (s *busyLookups) requireSpent(t *testing.T, budget time.Duration) {
	t.Helper()
	took := time.Duration(s.cpu.Load())
	assert.GreaterOrEqual(t, took, budget*3/4, "searches were refused after only %s of host CPU time", took)
}

var busySink atomic.Uint64

func (s *busyLookups) Search(ctx context.Context, req json.RawMessage) (json.RawMessage, error) {
	s.calls.Add(1)
	began := time.Now()
	clock := startLookupClock()
	defer func() {
		s.cpu.Add(int64(clock.stop()))
		s.wall.Add(int64(time.Since(began)))
	}()
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for m := s.maxConcurrent.Load(); n > m && !s.maxConcurrent.CompareAndSwap(m, n); m = s.maxConcurrent.Load() {
	}
	x := uint64(n)
	for clock.used() < s.cost {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for range 10000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	busySink.Add(x)
	return json.RawMessage(`[]`), nil
}

// A run cut short lists the calls that were still running, for the error the model gets.
func TestPendingCallsAreListed(t *testing.T) {
	b := &fakeBridge{release: make(chan struct{})}
	defer close(b.release)
	res, err := run(t, `openclaw.tools.search('a'); return await openclaw.tools.call('openclaw:core:slow', {})`, b,
		&RunOptions{Timeout: 300 * time.Millisecond})
	requireKind(t, err, "timeout")
	require.Len(t, res.Pending, 1)
	assert.Equal(t, "call", res.Pending[0].Op)
	assert.Equal(t, "openclaw:core:slow", res.Pending[0].Tool)
	assert.Greater(t, res.Pending[0].Elapsed, 200*time.Millisecond)
	assert.Equal(t, 2, res.Calls)
}

// Console output counts what the logs cost as JSON: empty entries and escapes too.
func TestConsoleCountsWhatItPrints(t *testing.T) {
	res, err := run(t, "for (;;) console.log()", nil, &RunOptions{MaxOutputBytes: 3000})
	requireKind(t, err, "output")
	assert.Len(t, res.Logs, 1000, "an empty entry costs 3 bytes: its quotes and a separator")
	res, err = run(t, "for (;;) console.log('\\x01'.repeat(100))", nil, &RunOptions{MaxOutputBytes: 3000})
	requireKind(t, err, "output")
	assert.Len(t, res.Logs, 4, "a control character costs the 6 bytes of its escape")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(res.Logs))
	assert.LessOrEqual(t, b.Len(), 3000+2, "the logs as printed stay within the limit")
}

// An uncaught exception's message and stack stand in for the result: they are cut, and count against its limit.
func TestHugeExceptionsAreCut(t *testing.T) {
	_, err := run(t, "throw new Error('E'.repeat(8 << 20))", nil, nil)
	info := requireKind(t, err, "exception")
	assert.Less(t, len(info.Message), 17<<10)
	assert.Contains(t, info.Message, "bytes cut")
	_, err = run(t, "const e = new Error('m'.repeat(5000)); e.stack = 's'.repeat(5000); throw e", nil, &RunOptions{MaxResultBytes: 2000})
	info = requireKind(t, err, "exception")
	assert.LessOrEqual(t, len(info.Message)+len(info.Stack), 2000+100)
	_, err = run(t, "throw 'é'.repeat(1 << 20)", nil, nil)
	info = requireKind(t, err, "exception")
	assert.True(t, utf8.ValidString(info.Message), "cut at a character boundary")
}

func TestGuestTrapIsACrash(t *testing.T) {
	info := Describe(fmt.Errorf("%w: wasm error: out of bounds memory access\nwasm stack trace: ...", wasm.ErrTrap))
	assert.Equal(t, "crash", info.Kind)
	assert.NotContains(t, info.Message, "wasm stack trace")
}

// The run ends once the result is known and nothing is outstanding: by itself when the script made no timer,
// through the prelude's idle timer when it did, whatever timers it left due; callbacks queued before the end
// still run.
func TestRunEndsWhenSettled(t *testing.T) {
	for _, tc := range []struct{ name, code, want, logs string }{
		{"no timers", "Promise.resolve().then(() => console.log('after')); return 1", "1", `["after"]`},
		{"interval left running", "let n = 0; setInterval(() => { n++ }, 10); return 'done'", `"done"`, `null`},
		{"far timer left", "setTimeout(() => console.log('late'), 1e9); return 2", "2", `null`},
		{"due timer runs first", "setTimeout(() => console.log('due'), 0); await null; return 3", "3", `["due"]`},
		{"call not awaited", "openclaw.tools.search('weather'); return 4", "4", `null`},
		{"globals as they were", "return [setTimeout.name, setTimeout.length, setInterval.name, setInterval.length, typeof setTimeout(() => {}, 1)]",
			`["setTimeout",2,"setInterval",2,"number"]`, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := run(t, tc.code, nil, &RunOptions{Timeout: 10 * time.Second})
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(res.Value))
			logs, _ := json.Marshal(res.Logs)
			assert.JSONEq(t, tc.logs, string(logs))
			assert.Empty(t, res.Pending)
		})
	}
}

// Code that cannot await runs as a plain function (jsprep), settled by the prelude as an async function's return
// or throw would settle its promise. Each script here runs both ways (a comment naming await keeps it async):
// the value, the logs in their order and the error must be the same.
func TestPlainAndAsyncMainAgree(t *testing.T) {
	for _, code := range []string{
		"Promise.resolve().then(() => console.log('a')); console.log('b'); return 1",
		"Promise.resolve().then(() => setTimeout(() => console.log('t'), 0)); return 1",
		"setTimeout(() => console.log('late'), 5); Promise.resolve().then(() => console.log('mt')); return 6",
		"queueMicrotask(() => console.log('m')); return 2",
		"Promise.resolve().then(() => console.log('a')).then(() => console.log('b')); return Promise.resolve(5).then(v => { console.log('c'); return v })",
		"return {then(r) { console.log('then'); r(7) }}",
		"Promise.resolve().then(() => console.log('a')); throw new Error('x')",
		"null.x",
		"() => { Promise.resolve().then(() => console.log('a')); return () => 3 }",
		"export default function () { queueMicrotask(() => console.log('q')); return 4 }",
		"const v = 8; v",
		"return new Promise(() => {})",
		"Promise.reject(new Error('unhandled')); return 9",
	} {
		t.Run(code, func(t *testing.T) {
			p, err := jsprep.Read(code)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(p.Source, jsprep.Boot+"(false, (function ()") ||
				strings.HasPrefix(p.Source, jsprep.Boot+"(true, (function ()"), "runs as a plain function: %s", p.Source)
			plain, plainErr := run(t, code, nil, nil)
			async, asyncErr := run(t, code+"\n// await", nil, nil)
			assert.Equal(t, asyncErr, plainErr)
			assert.Equal(t, string(async.Value), string(plain.Value))
			assert.Equal(t, async.Logs, plain.Logs)
		})
	}
}
