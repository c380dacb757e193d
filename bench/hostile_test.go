package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/internal/corpus"
	"github.com/toolsearch/toolsearch/internal/synthetic"
	tsruntime "github.com/toolsearch/toolsearch/runtime"
	"github.com/toolsearch/toolsearch/wasm"
)

// The hostile suite: attacks on what a script costs the host, not only the guest. Each runs as a model's
// tool_search_code call through the runtime, exactly as `toolsearch run` runs one, with the default limits (64 MiB
// sandbox, 1 s timeout unless said otherwise), in a child process (this test binary, re-executed) that measures
// every attack on its own: its wall time, the process's peak RSS, the CPU the process used, the size of the answer
// as the CLI prints it, and its kind. The parent asserts the host's bounds on each.
//
// The classes: time (instructions whose cost grows with an operand), host memory through the bridge, host-call
// arguments, output, memory exhaustion reported right, guest crashes, NUL in the source, host CPU outside fuel,
// and more found by reading the code.

// Bounds the parent asserts. How late an answer comes after the deadline is measured twice: in process CPU used
// after the deadline (what the host spends on a script that should have stopped, whatever else the machine
// runs), and in wall time, which on a shared machine includes waiting for a core (with the CPU 97% contended,
// a thread here waited up to 2 s for one); BenchmarkDeadlineOvershoot measures wall time on a quiet machine.
const (
	hostileRSSBound     = 160 << 20                     // peak process RSS with the default 64 MiB sandbox
	hostileCPUPastLimit = 100 * time.Millisecond        // process CPU between the deadline and the answer
	hostileTimeSlack    = 3 * time.Second               // wall time past the deadline, on a loaded machine
	hostileAnswerBound  = (1 << 20) + (64 << 10) + 4096 // result limit + console limit + the envelope
	hostileCPURatio     = 3                             // host CPU of an attack, against its benign twin's
	hostileCPUFloor     = 20 * time.Millisecond         // what a GC or a page fault storm adds to a 10 ms run
	hostileDeadline     = time.Second                   // the timeout of the attacks on the deadline
)

type hostileAttack struct {
	name string
	code string
	kind string // expected error kind; "" means the script succeeds
	// big runs the attack against 10,000 synthetic tools instead of the 644 real ones, for host CPU (the scan of
	// every name that an unknown id used to cost would take 2 s of CPU for 100 ids at this size).
	big bool
	// twin marks attacks whose guest work is negligible, so that the process's CPU is what the script caused
	// outside its fuel: twin is a benign script making the same calls, run just before and after the attack in
	// the same process, and the attack may cost at most hostileCPURatio times the twin's CPU (plus
	// hostileCPUFloor). A ratio holds on a loaded machine, where both runs slow down alike; a bound in
	// milliseconds did not (152-169 ms against 140 ms with nothing changed).
	twin  string
	value string // when set, the JSON value the script must return
	// deadline marks attacks on the deadline itself, and the host-CPU attacks: they run with a 1 s timeout, as the
	// attacks this suite reproduces did. Every other attack has the longest timeout (60 s), so that a machine
	// whose cores are busy with other work does not turn the limit the attack must reach (memory, output, a
	// budget) into a timeout; those attacks end at their limit long before it.
	deadline bool
	// budget marks attacks stopped by the host CPU budget of searches and describes (5% of the timeout). On a
	// machine whose cores other work holds, the run can reach its 1 s deadline before its searches have had
	// 50 ms of CPU: the attack (and its twin) then end as a timeout, which bounds the host as well; the CPU
	// ratio to the twin is checked either way.
	budget bool
}

// echoTool is an in-process tool taking any object and echoing it, the bridge's most expensive honest answer.
const echoID = "openclaw:test:echo"

var hostileAttacks = []hostileAttack{
	// Time: instructions whose cost grows with an operand.
	{deadline: true, name: "copyWithin 46 MiB", code: "const a = new Uint8Array(46 << 20); for (;;) a.copyWithin(0, 1)", kind: "timeout"},
	{deadline: true, name: "fill 46 MiB", code: "const a = new Uint8Array(46 << 20); for (let i = 0; ; i++) a.fill(i)", kind: "timeout"},
	{deadline: true, name: "set 24 MiB", code: "const a = new Uint8Array(24 << 20), b = new Uint8Array(24 << 20); for (;;) a.set(b)", kind: "timeout"},
	{deadline: true, name: "repeat bomb", code: "for (let i = 0; ; i++) { const s = 'x'.repeat(8 << 20) + i }", kind: "timeout"},
	{deadline: true, name: "padStart bomb", code: "for (;;) { const s = ''.padStart(8 << 20, 'ab') }", kind: "timeout"},
	{deadline: true, name: "array copy", code: "const a = new Array(1 << 20).fill(1); for (;;) a.slice()", kind: "timeout"},
	{deadline: true, name: "busy loop after await", code: "await openclaw.tools.search('web'); for (;;) {}", kind: "timeout"},

	// Host memory through the bridge.
	{name: "100 concurrent echo calls of '<'", code: `const big = '<'.repeat(85000);
		const rs = await Promise.all(Array.from({length: 100}, () => openclaw.tools.call('` + echoID + `', {text: big})
			.then(r => r.result.details.text.length, e => 0)));
		return rs.filter(n => n === 85000).length > 0`, value: "true"},
	// An echoed call returns its arguments twice (text and details): 430 KB of arguments make a 0.9 MB result.
	{name: "80 results of 0.9 MiB, one by one", code: `const p = 'y'.repeat(430000); let n = 0;
		for (let i = 0; i < 80; i++) { try { await openclaw.tools.call('` + echoID + `', {p}); n++ } catch (e) {} }
		return n > 0`, value: "true"},
	{name: "80 results of 0.9 MiB at once", code: `const p = 'y'.repeat(430000);
		const rs = await Promise.allSettled(Array.from({length: 80}, () => openclaw.tools.call('` + echoID + `', {p})));
		return rs.some(r => r.status === 'fulfilled')`, value: "true"},
	{deadline: true, name: "100 calls of 1 MiB started, never awaited, busy", code: `const p = 'q'.repeat((1 << 20) - 100);
		for (let i = 0; i < 100; i++) openclaw.tools.call('` + echoID + `', {p}).catch(() => {});
		for (;;) {}`, kind: "timeout"},
	{name: "12 searches of 1 MiB", code: `const q = 'a '.repeat(500000); let refused = 0;
		for (let i = 0; i < 12; i++) { try { await openclaw.tools.search(q) } catch (e) { refused++ } } return refused > 0`, value: "true"},
	{name: "deeply nested call arguments", code: `const deep = JSON.parse('['.repeat(5000) + ']'.repeat(5000));
		try { await openclaw.tools.call('` + echoID + `', {deep}) } catch (e) {} return 1`, value: "1"},

	// Host-call arguments: an Array.prototype index setter used to catch the lists the prelude built.
	{name: "index setter pads console.log", code: `const big = 'z'.repeat(1 << 20);
		for (const i of [4, 5]) Object.defineProperty(Array.prototype, i, {set(v) { this.length = 65000; this.fill(big, 6) }, configurable: true});
		console.log('padded?'); return 1`, value: "1"},
	{name: "index setter turns log into settle", code: `Object.defineProperty(Array.prototype, 4, {set(v) { this[0] = 3 }, configurable: true});
		console.log('not json {'); return 'real'`, value: `"real"`},

	// Output.
	{name: "empty console entries", code: "for (;;) console.log()", kind: "output"},
	{name: "control characters in logs", code: "for (;;) console.log('\\x01'.repeat(1000))", kind: "output"},
	{name: "8 MiB error message", code: "throw new Error('E'.repeat(8 << 20))", kind: "exception"},
	{name: "8 MiB stack", code: "const e = new Error('x'); e.stack = 's'.repeat(8 << 20); throw e", kind: "exception"},
	{name: "8 MiB thrown string", code: "throw 'E'.repeat(8 << 20)", kind: "exception"},
	{name: "2 MiB result", code: "return 'x'.repeat(2 << 20)", kind: "result"},
	{name: "completion value after breaking out", code: "})); 'x'.repeat(20e6) + ((() => {", value: "null"},

	// Memory exhaustion, reported as memory only when the cap was hit.
	{name: "many small allocations", code: "const a = []; for (;;) a.push({})", kind: "memory"},
	{name: "small arrays", code: "const a = []; for (;;) a.push([1, 2, 3])", kind: "memory"},
	{name: "1 MiB buffers", code: "const a = []; for (;;) a.push(new Uint8Array(1 << 20))", kind: "memory"},
	{name: "string doubling", code: "let s = 'x'; for (;;) s += s", kind: "memory"},
	{name: "one huge buffer", code: "return new Uint8Array(1 << 30).length", kind: "memory"},
	{name: "faked InternalError", code: "throw Object.assign(new Error('out of memory'), {name: 'InternalError'})", kind: "exception"},

	// Guest crashes and the source.
	{name: "bytecode module", code: "const b = await import('qjs:bjson'); return b.read(new ArrayBuffer(8), 0, 8)", kind: "exception"},
	{name: "NUL in the source", code: "return 1\x00; while (true) {}", kind: "syntax"},
	{name: "exit", code: "const std = await import('qjs:std'); std.exit(3)", kind: "exit"},

	// Host CPU outside fuel, against 10,000 tools.
	{name: "100 describes of unknown ids", big: true, deadline: true, budget: true, code: `let n = 0;
		for (let i = 0; i < 100; i++) { try { await openclaw.tools.describe('zzzz_create_invoic_' + i) } catch (e) { n++ } }
		return n`, value: "100", twin: `let n = 0;
		for (let i = 0; i < 100; i++) { try { await openclaw.tools.describe('` + echoID + `') } catch (e) {} n++ }
		return n`},
	{name: "100 calls of unknown ids", big: true, deadline: true, code: `let n = 0;
		for (let i = 0; i < 100; i++) { try { await openclaw.tools.call('Zzzz_Create_Invoic_' + i, {}) } catch (e) { n++ } }
		return n`, value: "100", twin: `let n = 0;
		for (let i = 0; i < 100; i++) { try { await openclaw.tools.call('` + echoID + `', {}) } catch (e) {} n++ }
		return n`},
	// Its twin makes as many batch searches of the same queries, four at a time instead of sixteen: both reach the
	// searches' share of the timeout, the attack with fewer calls.
	{name: "100 worst batch searches", big: true, deadline: true, budget: true, code: worstQuery + `
		for (let i = 0; i < 100; i++) { try { await openclaw.tools.search({queries: Array.from({length: 16}, (_, j) => q + ' x' + i + j)}) } catch (e) {} }
		return 1`, value: "1", twin: worstQuery + `
		for (let i = 0; i < 100; i++) { try { await openclaw.tools.search({queries: Array.from({length: 4}, (_, j) => q + ' x' + i + j)}) } catch (e) {} }
		return 1`},
}

// worstQuery declares q, the costliest search query: 2 KiB of the words most tools share.
const worstQuery = `const words = 'create list get update delete search send upload download sync archive export import approve schedule cancel start stop restart query invoice customer issue message channel file folder event calendar ticket order product report';
		const q = (words + ' ').repeat(20).slice(0, 2048);`

// hostileReport is what the child measured of one attack.
type hostileReport struct {
	Name    string        `json:"name"`
	Kind    string        `json:"kind"`
	Message string        `json:"message"`
	Value   string        `json:"value"`
	Wall    time.Duration `json:"wall"`
	PeakRSS int64         `json:"peakRSS"`
	BaseRSS int64         `json:"baseRSS"`
	CPU     time.Duration `json:"cpu"`
	// CPUPastDeadline is the process CPU between the deadline and the answer (0 if it answered in time).
	CPUPastDeadline time.Duration `json:"cpuPastDeadline"`
	// TwinCPU is the larger CPU of the attack's twin run before and after it; TwinKind how the twin ended.
	TwinCPU  time.Duration `json:"twinCPU,omitempty"`
	TwinKind string        `json:"twinKind,omitempty"`
	Answer   int           `json:"answer"` // bytes of the answer as the CLI prints it
	Timeout  time.Duration `json:"timeout"`
	ChildErr string        `json:"childErr,omitempty"`
}

const hostileChildEnv = "TOOLSEARCH_HOSTILE_CHILD"

// TestHostileChild is the child's side; without the environment variable it does nothing.
func TestHostileChild(t *testing.T) {
	mode := os.Getenv(hostileChildEnv)
	if mode == "" {
		t.Skip("runs only as the child of TestHostileScripts")
	}
	names := strings.Split(os.Getenv(hostileChildEnv+"_NAMES"), "\n")
	var picked []hostileAttack
	for _, a := range hostileAttacks {
		for _, n := range names {
			if a.name == n {
				picked = append(picked, a)
			}
		}
	}
	h, err := newHostileHost(picked[0].big, os.Getenv(hostileChildEnv+"_CACHE"))
	require.NoError(t, err)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	emit := func(r hostileReport) {
		line, _ := json.Marshal(r)
		fmt.Fprintf(out, "HOSTILE %s\n", line)
	}
	if mode == "parallel" {
		var wg sync.WaitGroup
		reports := make([]hostileReport, len(picked))
		for i, a := range picked {
			wg.Add(1)
			go func() {
				defer wg.Done()
				reports[i] = h.run(a, false)
			}()
		}
		wg.Wait()
		for _, r := range reports {
			emit(r)
		}
		return
	}
	for _, a := range picked {
		if a.twin == "" {
			emit(h.run(a, true))
			continue
		}
		twin := hostileAttack{name: a.name + " (twin)", code: a.twin, big: a.big, deadline: a.deadline}
		before := h.run(twin, true)
		r := h.run(a, true)
		after := h.run(twin, true)
		r.TwinCPU, r.TwinKind = max(before.CPU, after.CPU), before.Kind+after.Kind
		if before.ChildErr+after.ChildErr != "" {
			r.TwinKind = "child error: " + before.ChildErr + after.ChildErr
		}
		emit(r)
	}
}

// hostileHost is a runtime with the CLI's setup: the default limits and a catalog whose tools echo their input.
type hostileHost struct {
	rt    *tsruntime.Runtime // codeTimeoutMs of hostileDeadline
	slow  *tsruntime.Runtime // the longest codeTimeoutMs
	tools []catalog.Tool
}

var echoHandler = catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
	return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: string(args)}}, Details: args}, nil
})

func newHostileHost(big bool, cacheDir string) (*hostileHost, error) {
	var tools []catalog.Tool
	if big {
		tools = catalogTools(synthetic.Tools(10_000))
	} else {
		var err error
		if tools, err = catalog.ParseFile(corpus.CatalogFile()); err != nil {
			return nil, err
		}
	}
	for i := range tools {
		tools[i].Handler = echoHandler
	}
	tools = append(tools, catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "test", Name: "echo",
		Description: "Echo the arguments.", Parameters: json.RawMessage(`{"type":"object"}`), Handler: echoHandler})
	sb, err := hostfns.New(context.Background(), &hostfns.Options{Engine: wasm.Options{CompilationCacheDir: cacheDir}})
	if err != nil {
		return nil, err
	}
	cfg := tsruntime.DefaultConfig()
	cfg.Enabled, cfg.Mode = true, tsruntime.ModeCode
	cfg.CodeTimeoutMs = tsruntime.MaxCodeTimeoutMs
	slow, err := tsruntime.New(context.Background(), &tsruntime.Options{Config: cfg, Sandbox: sb})
	if err != nil {
		return nil, err
	}
	cfg.CodeTimeoutMs = int(hostileDeadline.Milliseconds())
	rt, err := tsruntime.New(context.Background(), &tsruntime.Options{Config: cfg, Sandbox: sb})
	if err != nil {
		return nil, err
	}
	return &hostileHost{rt: rt, slow: slow, tools: tools}, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run executes one attack and measures it. alone means nothing else runs in the process, so its peak RSS and
// CPU are the attack's own.
func (h *hostileHost) run(a hostileAttack, alone bool) hostileReport {
	rep := hostileReport{Name: a.name, Timeout: time.Duration(tsruntime.MaxCodeTimeoutMs) * time.Millisecond}
	rt := h.slow
	if a.deadline {
		rep.Timeout, rt = hostileDeadline, h.rt
	}
	// One session for every attack: the catalog is built once and reused.
	run, err := rt.StartRun(context.Background(), tsruntime.RunRequest{SessionID: "hostile", RunID: a.name, Tools: h.tools})
	if err != nil {
		rep.ChildErr = err.Error()
		return rep
	}
	defer run.Close()
	args, _ := json.Marshal(map[string]string{"code": a.code})
	if alone {
		runtime.GC()
		debug.FreeOSMemory()
		_ = resetPeakResident()
		rep.BaseRSS = residentBytes()
	}
	cpu0, start := cpuTime(), time.Now()
	var atDeadline atomic.Int64
	timer := time.AfterFunc(rep.Timeout, func() { atDeadline.Store(int64(cpuTime())) })
	res, err := run.Execute(context.Background(), tsruntime.ToolCall{ID: "hostile", Name: tsruntime.ToolSearchCodeName, Arguments: args})
	cpu1 := cpuTime()
	rep.Wall, rep.CPU = time.Since(start), cpu1-cpu0
	if !timer.Stop() {
		for atDeadline.Load() == 0 {
			runtime.Gosched() // the timer fired: wait for its reading
		}
		rep.CPUPastDeadline = max(cpu1-time.Duration(atDeadline.Load()), 0)
	}
	if alone {
		rep.PeakRSS, _ = peakResidentBytes()
	}
	if err != nil {
		rep.ChildErr = err.Error()
		return rep
	}
	// What `toolsearch run` prints: the code result, encoded without HTML escaping.
	var answer bytes.Buffer
	enc := json.NewEncoder(&answer)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(json.RawMessage(res.Details))
	rep.Answer = answer.Len()
	var body struct {
		OK    bool
		Value json.RawMessage
		Error *struct{ Kind, Message string }
	}
	if err := json.Unmarshal(res.Details, &body); err != nil {
		rep.ChildErr = "the answer is not a code result: " + err.Error()
		return rep
	}
	rep.Value = string(body.Value)
	if len(rep.Value) > 200 {
		rep.Value = rep.Value[:200]
	}
	if body.Error != nil {
		rep.Kind, rep.Message = body.Error.Kind, body.Error.Message
		if len(rep.Message) > 300 {
			rep.Message = rep.Message[:300]
		}
	}
	return rep
}

// runHostileChild re-executes this test binary as the child and returns its reports by attack name.
func runHostileChild(t *testing.T, mode string, attacks []hostileAttack, cacheDir string) map[string]hostileReport {
	t.Helper()
	names := make([]string, len(attacks))
	for i, a := range attacks {
		names[i] = a.name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileChild$", "-test.count=1", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), hostileChildEnv+"="+mode, hostileChildEnv+"_NAMES="+strings.Join(names, "\n"),
		hostileChildEnv+"_CACHE="+cacheDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "the child process failed (did a script take the host down?)\n%s\n%s", out, stderr.String())
	reports := map[string]hostileReport{}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "HOSTILE "); ok {
			var r hostileReport
			require.NoError(t, json.Unmarshal([]byte(rest), &r), rest)
			reports[r.Name] = r
		}
	}
	require.Len(t, reports, len(attacks), "every attack reported\n%s", out)
	return reports
}

func TestHostileScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes, one with a 10,000-tool catalog")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("measures resident memory through /proc")
	}
	cache := t.TempDir()
	var real, big []hostileAttack
	for _, a := range hostileAttacks {
		if a.big {
			big = append(big, a)
		} else {
			real = append(real, a)
		}
	}
	check := func(t *testing.T, a hostileAttack, r hostileReport) {
		require.Empty(t, r.ChildErr)
		byDeadline := a.budget && r.Kind == "timeout"
		if !byDeadline {
			assert.Equal(t, a.kind, r.Kind, "kind (message: %s)", r.Message)
		}
		assert.NotEqual(t, "internal", r.Kind, "a script never causes kind internal")
		if a.value != "" && a.kind == "" && !byDeadline {
			assert.JSONEq(t, a.value, r.Value)
		}
		assert.LessOrEqual(t, r.CPUPastDeadline, hostileCPUPastLimit, "the host kept working on the script past its deadline")
		assert.Less(t, r.Wall, r.Timeout+hostileTimeSlack, "answered %v after a %v timeout", r.Wall, r.Timeout)
		assert.LessOrEqual(t, r.Answer, hostileAnswerBound, "the answer is bounded by the result and console limits")
		if a.twin != "" {
			if a.budget {
				require.Empty(t, strings.ReplaceAll(r.TwinKind, "timeout", ""), "the benign twin succeeds or meets its deadline")
			} else {
				require.Empty(t, r.TwinKind, "the benign twin succeeds")
			}
			limit := hostileCPURatio*r.TwinCPU + hostileCPUFloor
			assert.LessOrEqual(t, r.CPU, limit, "host CPU outside fuel: %v against a twin's %v", r.CPU, r.TwinCPU)
		}
	}
	for _, group := range []struct {
		name    string
		attacks []hostileAttack
	}{{"real catalog", real}, {"10,000 tools", big}} {
		t.Run(group.name, func(t *testing.T) {
			reports := runHostileChild(t, "sequential", group.attacks, cache)
			for _, a := range group.attacks {
				r := reports[a.name]
				t.Run(a.name, func(t *testing.T) {
					check(t, a, r)
					if !a.big { // the big catalog alone takes more than the bound
						assert.LessOrEqual(t, r.PeakRSS, int64(hostileRSSBound), "peak RSS %d MiB (%d MiB before)", r.PeakRSS>>20, r.BaseRSS>>20)
					}
					t.Logf("%-45s kind %-9s wall %6.0f ms  peak RSS %4d MiB (base %3d)  cpu %5.0f ms (%3.0f past deadline, twin %3.0f)  answer %7d B",
						a.name, r.Kind, ms(r.Wall), r.PeakRSS>>20, r.BaseRSS>>20, ms(r.CPU), ms(r.CPUPastDeadline), ms(r.TwinCPU), r.Answer)
				})
			}
		})
	}
	t.Run("8 at once", func(t *testing.T) {
		var eight []hostileAttack
		for _, a := range real {
			if a.deadline && !a.big {
				eight = append(eight, a)
			}
			if len(eight) == 8 {
				break
			}
		}
		reports := runHostileChild(t, "parallel", eight, cache)
		for _, a := range eight {
			r := reports[a.name]
			t.Run(a.name, func(t *testing.T) {
				require.Empty(t, r.ChildErr)
				assert.Equal(t, a.kind, r.Kind, r.Message)
				assert.Less(t, r.Wall, r.Timeout+hostileTimeSlack)
				t.Logf("%-45s kind %-9s wall %6.0f ms", a.name, r.Kind, ms(r.Wall))
			})
		}
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
