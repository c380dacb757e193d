package wasm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engines are compiled once per test binary: compiling QuickJS costs about a second.
var (
	sharedEngine    = sync.OnceValues(func() (*Engine, error) { return New(context.Background(), nil) })
	unmeteredEngine = sync.OnceValues(func() (*Engine, error) { return newEngine(context.Background(), nil, false) })
)

func engine(t testing.TB) *Engine {
	t.Helper()
	e, err := sharedEngine()
	require.NoError(t, err)
	return e
}

func runScript(t testing.TB, script string, opts *RunOptions) (*Result, error) {
	t.Helper()
	return engine(t).Run(context.Background(), script, opts)
}

func requireLimit(t *testing.T, err error, kind LimitKind) *LimitError {
	t.Helper()
	var limit *LimitError
	require.ErrorAs(t, err, &limit, "want a %s limit error", kind)
	require.Equal(t, kind, limit.Kind, err.Error())
	return limit
}

func TestRunValues(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"1 + 1", "2"},
		{"'a' + 'b'", "ab"},
		{"undefined", ""},
		{"JSON.stringify({a: [1, 2]})", `{"a":[1,2]}`},
		{"(async () => { await null; return 'later' })()", "later"},
		{"'naïve ✓'", "naïve ✓"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			res, err := runScript(t, tc.script, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Value)
			assert.Positive(t, res.Usage.Fuel)
			assert.Positive(t, res.Usage.MemoryBytes)
		})
	}
}

// The instrumented module must compute exactly what the module as shipped computes.
func TestMeteredMatchesUnmetered(t *testing.T) {
	unmetered, err := unmeteredEngine()
	require.NoError(t, err)
	scripts := []string{
		"let s = 0; for (let i = 0; i < 100000; i++) s += i % 7; s",
		"JSON.stringify(Array.from({length: 50}, (_, i) => ({i, sq: i * i, s: String(i).repeat(3)})))",
		"[3, 1, 2].sort().map(x => x * 2).join(',')",
		"'abc'.replace(/b/g, 'x') + /(\\d+)-(\\d+)/.exec('12-34')[2]",
		"function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } fib(20)",
		"new Map([[1, 'a'], [2, 'b']]).get(2) + new Set([1, 1, 2]).size",
		"(async () => { const xs = await Promise.all([1, 2, 3].map(async x => x * 10)); return xs.join('+') })()",
		"try { null.x } catch (e) { e.name + ': ' + e.message }",
		"Math.sqrt(2).toFixed(10) + ' ' + (0.1 + 0.2) + ' ' + (2 ** 53 + 1)",
		"BigInt(2) ** 100n + ''",
		"new Uint8Array([1, 2, 3]).reduce((a, b) => a + b, 0)",
		"class A { #x = 1; get x() { return this.#x } }; new A().x",
		"String.fromCharCode(...Array.from({length: 26}, (_, i) => 97 + i))",
	}
	for _, s := range scripts {
		t.Run(s, func(t *testing.T) {
			want, err := unmetered.Run(context.Background(), s, nil)
			require.NoError(t, err)
			got, err := runScript(t, s, nil)
			require.NoError(t, err)
			assert.Equal(t, want.Value, got.Value)
		})
	}
}

func TestScriptErrors(t *testing.T) {
	t.Run("exception with line and stack", func(t *testing.T) {
		_, err := runScript(t, "let a = 1;\n\nnull.x", nil)
		var se *ScriptError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "TypeError", se.Name)
		assert.Equal(t, "cannot read property 'x' of null", se.Message)
		assert.Equal(t, 3, se.Line)
		assert.Contains(t, se.Stack, "<input>:3")
		assert.False(t, se.IsSyntax())
	})
	t.Run("syntax error with line", func(t *testing.T) {
		_, err := runScript(t, "let a = 1;\nlet b = ;", nil)
		var se *ScriptError
		require.ErrorAs(t, err, &se)
		assert.True(t, se.IsSyntax())
		assert.Equal(t, 2, se.Line)
	})
	t.Run("non-Error thrown", func(t *testing.T) {
		_, err := runScript(t, "throw 42", nil)
		var se *ScriptError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "42", se.Message)
	})
	t.Run("rejected promise", func(t *testing.T) {
		_, err := runScript(t, "(async () => { throw new RangeError('nope') })()", nil)
		var se *ScriptError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "RangeError", se.Name)
		assert.Equal(t, "nope", se.Message)
	})
}

func TestDeadlineStopsBusyLoop(t *testing.T) {
	res, err := runScript(t, "while (true) {}", &RunOptions{Timeout: 200 * time.Millisecond})
	limit := requireLimit(t, err, LimitTimeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualValues(t, 200, limit.Limit)
	assert.Positive(t, res.Usage.Fuel, "the loop ran until the deadline")
	assert.Less(t, res.Usage.Wall, 5*time.Second)
}

func TestCallerContextDeadlineAndCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := engine(t).Run(ctx, "for (;;) {}", nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = engine(t).Run(ctx, "for (;;) {}", nil)
	assert.ErrorIs(t, err, context.Canceled)
	var limit *LimitError
	assert.False(t, errors.As(err, &limit), "a cancellation is not a limit")
}

func TestFuelLimitAndDeterminism(t *testing.T) {
	res, err := runScript(t, "for (;;) {}", &RunOptions{Fuel: 5_000_000, Timeout: time.Minute})
	limit := requireLimit(t, err, LimitFuel)
	assert.EqualValues(t, 5_000_000, limit.Limit)
	assert.Greater(t, res.Usage.Fuel, uint64(5_000_000))

	// The same script burns exactly the same fuel on every run, on fresh instances of the same snapshot.
	script := "let s = 0; for (let i = 0; i < 20000; i++) { s += JSON.stringify({i}).length } s"
	var first uint64
	for i := range 5 {
		res, err := runScript(t, script, nil)
		require.NoError(t, err)
		if i == 0 {
			first = res.Usage.Fuel
			continue
		}
		assert.Equal(t, first, res.Usage.Fuel, "run %d", i)
	}
	// A budget exactly equal to what the script needs is enough; one unit less is not.
	_, err = runScript(t, script, &RunOptions{Fuel: first})
	require.NoError(t, err)
	_, err = runScript(t, script, &RunOptions{Fuel: first - 1})
	requireLimit(t, err, LimitFuel)
}

func TestFuelGrowsWithWork(t *testing.T) {
	fuel := func(n int) uint64 {
		// "| 0" keeps s a small integer: a sum that overflows into doubles would make later iterations dearer.
		res, err := runScript(t, fmt.Sprintf("let s = 0; for (let i = 0; i < %d; i++) s = (s + i) | 0; s", n), nil)
		require.NoError(t, err)
		return res.Usage.Fuel
	}
	base, one, two := fuel(0), fuel(100_000), fuel(200_000)
	perLoop := float64(one-base) / 100_000
	assert.InDelta(t, float64(two-base), 2*float64(one-base), float64(one-base)*0.01, "fuel is linear in work")
	assert.Greater(t, perLoop, 1.0, "every iteration costs at least one unit")
}

func TestMemoryLimits(t *testing.T) {
	for name, script := range map[string]string{
		"huge array":       "new Array(1e9).fill(0).length",
		"string doubling":  "let s = 'x'; for (;;) s += s",
		"1000 x 1 MiB buf": "const a = []; for (let i = 0; i < 1000; i++) a.push(new Uint8Array(1 << 20)); a.length",
		"object growth":    "const a = []; for (;;) a.push({i: a.length, s: 'x' + a.length})",
	} {
		t.Run(name, func(t *testing.T) {
			res, err := runScript(t, script, &RunOptions{Timeout: 30 * time.Second})
			limit := requireLimit(t, err, LimitMemory)
			assert.EqualValues(t, DefaultMaxMemoryBytes, limit.Limit)
			assert.LessOrEqual(t, res.Usage.MemoryBytes, uint64(DefaultMaxMemoryBytes))
		})
	}
	t.Run("page limit alone", func(t *testing.T) {
		e, err := New(context.Background(), &Options{MaxMemoryBytes: 32 << 20})
		require.NoError(t, err)
		defer e.Close(context.Background())
		res, err := e.Run(context.Background(), "const a = []; for (let i = 0; i < 1000; i++) a.push(new Uint8Array(1 << 20)); a.length", nil)
		limit := requireLimit(t, err, LimitMemory)
		assert.EqualValues(t, 32<<20, limit.Limit)
		assert.LessOrEqual(t, res.Usage.MemoryBytes, uint64(32<<20))
	})
	t.Run("per-run cap below the engine's", func(t *testing.T) {
		res, err := runScript(t, "new Uint8Array(20 << 20).length", &RunOptions{MemoryBytes: 16 << 20})
		limit := requireLimit(t, err, LimitMemory)
		assert.EqualValues(t, 16<<20, limit.Limit)
		assert.LessOrEqual(t, res.Usage.MemoryBytes, uint64(16<<20))
		res, err = runScript(t, "new Uint8Array(4 << 20).length", &RunOptions{MemoryBytes: 16 << 20})
		require.NoError(t, err)
		assert.Equal(t, "4194304", res.Value)
	})
	t.Run("cap below the snapshot", func(t *testing.T) {
		_, err := runScript(t, "1", &RunOptions{MemoryBytes: 64 << 10})
		requireLimit(t, err, LimitMemory)
	})
	t.Run("a script may catch out of memory and go on", func(t *testing.T) {
		res, err := runScript(t, "try { new Uint8Array(1 << 30) } catch (e) { 'caught ' + e.name }", nil)
		require.NoError(t, err)
		assert.Contains(t, res.Value, "caught")
	})
}

// A run's cap far below the engine's page limit stops ordinary objects too (QuickJS's own heap limit is off: the
// page cap is the one memory limit), and the error names the cap that tripped.
func TestRunCapStopsObjectGrowth(t *testing.T) {
	e, err := New(context.Background(), &Options{MaxMemoryBytes: 256 << 20})
	require.NoError(t, err)
	defer e.Close(context.Background())
	res, err := e.Run(context.Background(), "const a = []; for (;;) a.push({i: a.length})", &RunOptions{MemoryBytes: 8 << 20})
	limit := requireLimit(t, err, LimitMemory)
	assert.LessOrEqual(t, res.Usage.MemoryBytes, uint64(8<<20), "the 8 MiB cap, not the 256 MiB page limit, stopped it")
	assert.EqualValues(t, 8<<20, limit.Limit, "the error names the limit that tripped")
}

func TestStackLimit(t *testing.T) {
	for name, script := range map[string]string{
		"unbounded recursion":     "function f() { return f() + 1 } f()",
		"caught recursion":        "try { (function f() { f() })() } catch (e) { 'caught' }",
		"JSON nested 100,000":     "JSON.parse('['.repeat(100000) + ']'.repeat(100000)).length",
		"deep recursion in async": "(async () => { function f(n) { return f(n + 1) } return f(0) })()",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runScript(t, script, nil)
			requireLimit(t, err, LimitStack)
			// The engine is unharmed: the next run on it works.
			res, err := runScript(t, "40 + 2", nil)
			require.NoError(t, err)
			assert.Equal(t, "42", res.Value)
		})
	}
	t.Run("reasonable depth works", func(t *testing.T) {
		res, err := runScript(t, "function g(n) { return n == 0 ? 0 : 1 + g(n - 1) } g(1000)", nil)
		require.NoError(t, err)
		assert.Equal(t, "1000", res.Value)
		res, err = runScript(t, "JSON.parse('['.repeat(10000) + ']'.repeat(10000)).length", nil)
		require.NoError(t, err)
		assert.Equal(t, "1", res.Value)
	})
}

func TestExitEndsOnlyTheInstance(t *testing.T) {
	_, err := runScript(t, "import('qjs:std').then(std => std.exit(3))", nil)
	require.ErrorIs(t, err, ErrExit)
	assert.Contains(t, err.Error(), "exit code 3")
	res, err := runScript(t, "'alive'", nil)
	require.NoError(t, err)
	assert.Equal(t, "alive", res.Value)
}

func TestNoHostCapabilities(t *testing.T) {
	for name, tc := range map[string]struct{ script, want string }{
		"read /etc/passwd": {"import('qjs:std').then(std => String(std.open('/etc/passwd', 'r')))", "null"},
		"load a file":      {"import('qjs:std').then(std => { try { return String(std.loadFile('/etc/passwd')) } catch (e) { return 'threw' } })", "null"},
		"list /":           {"import('qjs:os').then(os => JSON.stringify(os.readdir('/')[0]))", "[]"},
		"list cwd":         {"import('qjs:os').then(os => JSON.stringify(os.readdir('.')[0]))", "[]"},
		"environment":      {"import('qjs:std').then(std => JSON.stringify(std.getenviron()))", "{}"},
		"getenv HOME":      {"import('qjs:std').then(std => String(std.getenv('HOME')))", "undefined"},
		"exec":             {"import('qjs:os').then(os => typeof os.exec)", "undefined"},
		"arguments":        {"typeof scriptArgs === 'undefined' ? 'none' : JSON.stringify(scriptArgs)", "[]"},
		"file module":      {"import('/etc/passwd').then(() => 'loaded', e => 'refused')", "refused"},
		"write a file":     {"import('qjs:std').then(std => String(std.open('/tmp/x', 'w')))", "null"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := runScript(t, tc.script, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Value)
		})
	}
}

func TestVirtualClock(t *testing.T) {
	before := time.Now().Add(-time.Second).UnixMilli()
	res, err := runScript(t, "Date.now()", nil)
	require.NoError(t, err)
	now, err := strconv.ParseInt(res.Value, 10, 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, now, before, "the clock starts at the real time of the run")
	assert.LessOrEqual(t, now, time.Now().Add(time.Second).UnixMilli())

	// A one-minute timer and a one-minute sleep resolve at once in virtual time.
	res, err = runScript(t, `(async () => {
		const t0 = Date.now();
		await new Promise(r => setTimeout(r, 60000));
		(await import('qjs:os')).sleep(60000);
		return Date.now() - t0;
	})()`, &RunOptions{Timeout: 5 * time.Second})
	require.NoError(t, err)
	elapsed, _ := strconv.Atoi(res.Value)
	assert.GreaterOrEqual(t, elapsed, 120000)
	assert.Less(t, res.Usage.Wall, 5*time.Second)
}

func TestStdioIsCapturedAndBounded(t *testing.T) {
	res, err := runScript(t, "print('hello'); for (let i = 0; i < 10000; i++) print('x'.repeat(100)); 1", &RunOptions{StdioBytes: 1000})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.Stdout, "hello\n"))
	assert.Len(t, res.Stdout, 1000)
}

func TestRunsAreIsolated(t *testing.T) {
	_, err := runScript(t, "globalThis.leak = 'secret'; Object.prototype.polluted = 1; Array.prototype.push = null; 1", nil)
	require.NoError(t, err)
	res, err := runScript(t, "typeof leak + ' ' + ({}).polluted + ' ' + typeof [].push", nil)
	require.NoError(t, err)
	assert.Equal(t, "undefined undefined function", res.Value)
}

func TestHostFunctions(t *testing.T) {
	type ctxKey struct{}
	var calls []string
	e, err := New(context.Background(), &Options{
		HostFunctions: []HostFunction{
			{Name: "echo", Func: func(ctx context.Context, args *Args) (string, error) {
				calls = append(calls, ctx.Value(ctxKey{}).(string))
				var parts []string
				for i := range args.Len() {
					parts = append(parts, args.String(i))
				}
				return strings.Join(parts, "|"), nil
			}},
			{Name: "sizes", Func: func(_ context.Context, args *Args) (string, error) {
				var parts []string
				for i := range args.Len() {
					parts = append(parts, strconv.Itoa(args.Bytes(i)))
				}
				return strings.Join(parts, ","), nil
			}},
			{Name: "fail", Func: func(context.Context, *Args) (string, error) {
				return "", &JSException{Message: "denied by host"}
			}},
			{Name: "abort", Func: func(context.Context, *Args) (string, error) {
				return "", errors.New("host gave up")
			}},
			{Name: "block", Func: func(ctx context.Context, _ *Args) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}},
			{Name: "stop", Func: func(context.Context, *Args) (string, error) { return "", ErrStop }},
		},
		Prelude: "globalThis.preluded = 'yes'",
	})
	require.NoError(t, err)
	defer e.Close(context.Background())
	ctx := context.WithValue(context.Background(), ctxKey{}, "run-1")

	res, err := e.Run(ctx, "echo('a', 1, null, {}) + ' ' + preluded", nil)
	require.NoError(t, err)
	assert.Equal(t, "a|1|null|[object Object] yes", res.Value)
	assert.Equal(t, []string{"run-1"}, calls, "host functions see the run's context")

	res, err = e.Run(ctx, "try { fail() } catch (e) { e.name + ': ' + e.message }", nil)
	require.NoError(t, err)
	assert.Equal(t, "TypeError: denied by host", res.Value)

	_, err = e.Run(ctx, "abort(); 'not reached'", nil)
	assert.EqualError(t, err, "host gave up")

	start := time.Now()
	_, err = e.Run(ctx, "block()", &RunOptions{Timeout: 100 * time.Millisecond})
	requireLimit(t, err, LimitTimeout)
	assert.Less(t, time.Since(start), 5*time.Second)

	res, err = e.Run(ctx, "setInterval(() => {}, 1); stop(); 'not reached'", nil)
	require.NoError(t, err, "ErrStop ends the run successfully even with timers left")
	assert.Equal(t, "", res.Value)
}

// A script can steal the native proxy behind a host function (through Function.prototype.call) and call it
// with forged arguments; only registered function ids may reach Go.
func TestForgedHostFunctionIDs(t *testing.T) {
	var called int
	e, err := New(context.Background(), &Options{HostFunctions: []HostFunction{
		{Name: "ok", Func: func(context.Context, *Args) (string, error) { called++; return "ok", nil }},
	}})
	require.NoError(t, err)
	defer e.Close(context.Background())
	res, err := e.Run(context.Background(), `
		let stolen;
		const orig = Function.prototype.call;
		Function.prototype.call = function (...args) { stolen = this; return orig.apply(this, args) };
		ok();
		Function.prototype.call = orig;
		const out = [];
		for (const id of [1, 7, -1, 2 ** 31, 1.5, 'x', null, {}]) {
			try { out.push(String(stolen(id, 0, 0, undefined))) } catch (e) { out.push(e.message) }
		}
		out.join(',')`, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, res.Value)
	for _, part := range strings.Split(res.Value, ",") {
		assert.Equal(t, "invalid host function call", part)
	}
	assert.Equal(t, 1, called)
}

// Four runaway scripts on two cores: without preemption in the fuel hook, the Go scheduler would starve and a
// timer in the test goroutine would not fire until they ended.
func TestRunawaysDoNotFreezeTheProcess(t *testing.T) {
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = runScript(t, "for (;;) {}", &RunOptions{Timeout: 3 * time.Second})
		}()
	}
	start := time.Now()
	timer := time.NewTimer(50 * time.Millisecond)
	<-timer.C
	late := time.Since(start)
	wg.Wait()
	for _, err := range errs {
		requireLimit(t, err, LimitTimeout)
	}
	assert.Less(t, late, 2*time.Second, "a 50 ms timer fired after %v while runaways ran", late)
}

func TestParallelRuns(t *testing.T) {
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	values := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := runScript(t, fmt.Sprintf("globalThis.mine = %d; let s = 0; for (let j = 0; j < 1000; j++) s += j; mine + ':' + s", i), nil)
			errs[i] = err
			if res != nil {
				values[i] = res.Value
			}
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, fmt.Sprintf("%d:499500", i), values[i])
	}
}

func TestEngineOptionsAreValidated(t *testing.T) {
	for name, o := range map[string]Options{
		"memory too small":      {MaxMemoryBytes: 512 << 10},
		"stack too small":       {StackBytes: 1024},
		"stack over half":       {MaxMemoryBytes: 16 << 20, StackBytes: 9 << 20},
		"unnamed host function": {HostFunctions: []HostFunction{{Func: func(context.Context, *Args) (string, error) { return "", nil }}}},
		"duplicate host names": {HostFunctions: []HostFunction{
			{Name: "a", Func: func(context.Context, *Args) (string, error) { return "", nil }},
			{Name: "a", Func: func(context.Context, *Args) (string, error) { return "", nil }},
		}},
		"broken prelude": {Prelude: "let = ;"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(context.Background(), &o)
			require.ErrorIs(t, err, ErrStartup)
		})
	}
}

func TestClosedEngine(t *testing.T) {
	e, err := New(context.Background(), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, e.Close(ctx))
	_, err = e.Run(context.Background(), "1", nil)
	require.ErrorIs(t, err, ErrClosed)
}

func TestLimitErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  *LimitError
		want string
	}{
		{NewLimitError(LimitTimeout, 1000, 1002), "script timed out after 1000 ms"},
		{NewLimitError(LimitFuel, 10, 11), "script ran out of fuel (budget 10 units)"},
		{NewLimitError(LimitMemory, 1024, 0), "script ran out of memory (limit 1024 bytes)"},
		{NewLimitError(LimitStack, 0, 0), "script exceeded the maximum stack depth"},
		{NewLimitError(LimitOutput, 5, 6), "script wrote more than 5 bytes of console output"},
		{NewLimitError(LimitResult, 5, 6), "script result is larger than 5 bytes"},
		{NewLimitError(LimitSource, 5, 6), "script source is 6 bytes, over the 5 byte limit"},
		{NewLimitError(LimitCalls, 5, 6), "script made more than 5 bridged calls"},
	} {
		assert.EqualError(t, tc.err, tc.want)
		assert.Equal(t, tc.err.Kind == LimitTimeout, errors.Is(tc.err, context.DeadlineExceeded))
	}
}

func TestCompilationCacheDir(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		e, err := New(context.Background(), &Options{CompilationCacheDir: dir})
		require.NoError(t, err, "engine %d", i)
		res, err := e.Run(context.Background(), "6 * 7", nil)
		require.NoError(t, err)
		assert.Equal(t, "42", res.Value)
		require.NoError(t, e.Close(context.Background()))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "compiled code was written to the cache directory")

	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	_, err = New(context.Background(), &Options{CompilationCacheDir: filepath.Join(blocker, "sub")})
	require.ErrorIs(t, err, ErrStartup, "an unusable cache directory is a start-up error")
}

// A host function with NoResult gives the script undefined, whatever it returns; one without, its string.
func TestHostFunctionNoResult(t *testing.T) {
	called := 0
	f := func(context.Context, *Args) (string, error) { called++; return "text", nil }
	e, err := New(context.Background(), &Options{HostFunctions: []HostFunction{
		{Name: "quiet", Func: f, NoResult: true},
		{Name: "loud", Func: f},
	}})
	require.NoError(t, err)
	defer e.Close(context.Background())
	res, err := e.Run(context.Background(), "JSON.stringify([typeof quiet(), loud()])", nil)
	require.NoError(t, err)
	assert.Equal(t, `["undefined","text"]`, res.Value)
	assert.Equal(t, 2, called)
}

// A budget is exact through counted loops too (countedLoopAt), whose chunks are charged before they run: here
// most of fmod's loops end in a return (the remainders are zero) before their chunk would have.
func TestFuelExactThroughCountedLoops(t *testing.T) {
	script := "let s = 0; for (let i = 1; i < 3000; i++) s += (i * 4294967296 * 7) % 7 + 1e300 % (i + 0.5); s"
	res, err := runScript(t, script, nil)
	require.NoError(t, err)
	_, err = runScript(t, script, &RunOptions{Fuel: res.Usage.Fuel})
	require.NoError(t, err)
	_, err = runScript(t, script, &RunOptions{Fuel: res.Usage.Fuel - 1})
	requireLimit(t, err, LimitFuel)
	unmetered, err := unmeteredEngine()
	require.NoError(t, err)
	want, err := unmetered.Run(context.Background(), script, nil)
	require.NoError(t, err)
	assert.Equal(t, want.Value, res.Value)
}
