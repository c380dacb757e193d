//go:build soak

package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// The MCP chaos soak (issue 7) is part of the soak target: go test -tags soak -run Soak -timeout 60m ./mcp
// SOAK_MCP_DURATION overrides how long the chaos lasts (a Go duration; default chaosDefaultDuration).
//
// Five upstream servers misbehave on a schedule while workers search and call through every path the product
// has (tool handlers, a tools-mode run, code-mode scripts in one shared sandbox, toolsearch's own MCP server) and
// rebuilders turn every Source.Changed into a new catalog:
//
//   - crasher: a child process whose "crash" tool exits mid-call every few seconds; the retry must bring it back;
//   - hanger: in memory; every third call of "sometimes_hangs" never answers, and every few seconds the whole
//     server freezes until the Source has given up on it, then thaws and must be reconnected;
//   - flooder: in memory; adds and removes tools all the time and sends hundreds of tools/list_changed a second;
//   - garbage: a hand-written JSON-RPC peer whose "sometimes_garbage" answers with junk now and then (lines that
//     are not JSON, results of the wrong shape, answers to a call nobody made, tool errors, JSON-RPC errors);
//   - healthy: a child process that behaves; every call to it must succeed.
//
// Every call is timed and classified; see chaosLedger for the rules, catalogChecker for what "consistent"
// means, and the end of TestSoakMCPChaos for the leak checks. TestSoakMCPChaosDetectors proves that each of
// those checks can fail.

const (
	chaosDefaultDuration = 150 * time.Second
	chaosCallTimeout     = 2 * time.Second
	// chaosSlack is how far past its CallTimeout a call may end. It is as large as the timeout itself: the shared
	// machine has shown load averages over 10, and a check tighter than the timeout would measure the scheduler.
	// A call that ignored its timeout would wait for an answer that never comes (a hung call, a frozen server, an
	// answer sent to another id) and blow far past this bound.
	chaosSlack        = chaosCallTimeout
	chaosCallBound    = chaosCallTimeout + chaosSlack
	chaosStartTimeout = 3 * time.Second
	chaosCloseTimeout = 3 * time.Second
	// chaosLiveness bounds how long a recovery (a crashed or thawed server back in service) or a catalog update
	// may take before the soak calls it stuck. It is a liveness bound, an order of magnitude above the real times.
	chaosLiveness = 30 * time.Second
)

const (
	srvCrasher = "crasher"
	srvFlooder = "flooder"
	srvGarbage = "garbage"
	srvHanger  = "hanger"
	srvHealthy = "healthy"
)

// chaosStaticTools are the listings of the servers whose tools never change (sorted).
var chaosStaticTools = map[string][]string{
	srvCrasher: {"crash", "echo"},
	srvGarbage: {"echo", "sometimes_garbage"},
	srvHanger:  {"echo", "sometimes_hangs"},
	srvHealthy: {"crash", "echo"},
}

// echoPrefix is what each server's echo tools put before the text: an answer with another prefix or text was
// routed to the wrong call.
var echoPrefix = map[string]string{
	srvCrasher: "crash: ", // the child's prefix is its behavior
	srvFlooder: "flooder: ",
	srvGarbage: "garbage: ",
	srvHanger:  "hanger: ",
	srvHealthy: "echo: ",
}

// Outcome kinds of a call.
const (
	kindOK          = "ok"
	kindToolError   = "tool error"   // the server answered: isError, or a JSON-RPC error (a result for the model)
	kindTimeout     = "timeout"      // no answer within CallTimeout
	kindUnavailable = "unavailable"  // the server is down, or went down during the call
	kindGone        = "tool gone"    // the server's listing no longer has the tool
	kindServerError = "server error" // another *ServerError: an unreadable answer
	kindClosed      = "closed"       // the Source is closed
	kindUnknownTool = "unknown tool" // a stale id the run's catalog does not have (toolsearch's MCP server path)
	kindBad         = "unclassified"
)

func chaosDuration(t *testing.T) time.Duration {
	s := os.Getenv("SOAK_MCP_DURATION")
	if s == "" {
		return chaosDefaultDuration
	}
	d, err := time.ParseDuration(s)
	require.NoError(t, err, "SOAK_MCP_DURATION")
	return d
}

// chaosLedger counts every call and holds it to the rules:
//   - it ended within chaosCallBound;
//   - a timeout took at least the CallTimeout it claims;
//   - an error is classified and names the server it came from;
//   - a call to the healthy server succeeded with the right answer (unless it overlapped Close);
//   - "closed" only once Close has begun.
type chaosLedger struct {
	callTimeout, bound time.Duration
	closing            atomic.Bool
	// lag, when set, is the twin the bound is measured against: a call may end later than the bound by twice
	// what the scheduler delayed a sleeping goroutine while the call ran, since load stretches both alike.
	lag *lagProbe

	mu         sync.Mutex
	calls      map[string]int            // by path
	kinds      map[string]map[string]int // server → kind → count
	maxTook    map[string]time.Duration  // by path
	maxWhat    string
	maxAll     time.Duration
	overTO     int // calls that took longer than CallTimeout (allowed up to the bound)
	violations []string
	nViolation int
}

func newChaosLedger(callTimeout, bound time.Duration) *chaosLedger {
	return &chaosLedger{callTimeout: callTimeout, bound: bound, calls: map[string]int{},
		kinds: map[string]map[string]int{}, maxTook: map[string]time.Duration{}}
}

// record counts one call. problem is what the classifier found wrong with it ("" for nothing).
func (l *chaosLedger) record(path, server, tool string, took time.Duration, kind, detail, problem string) {
	what := fmt.Sprintf("%s %s.%s (%s, %s)", path, server, tool, kind, took.Round(time.Millisecond))
	var problems []string
	if problem != "" {
		problems = append(problems, problem)
	}
	var late time.Duration
	if l.lag != nil {
		late = l.lag.since(time.Now().Add(-took))
	}
	if took > l.bound+2*late {
		problems = append(problems, fmt.Sprintf("took %s, more than CallTimeout %s + slack %s + twice the %s a "+
			"sleeping goroutine was held up meanwhile", took, l.callTimeout, l.bound-l.callTimeout, late))
	}
	if kind == kindTimeout && took < l.callTimeout {
		problems = append(problems, fmt.Sprintf("reported no answer within %s after only %s", l.callTimeout, took))
	}
	closing := l.closing.Load()
	if server == srvHealthy && kind != kindOK && !closing {
		problems = append(problems, "a call to the healthy server failed")
	}
	if kind == kindClosed && !closing {
		problems = append(problems, "reported the Source closed before Close")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls[path]++
	if l.kinds[server] == nil {
		l.kinds[server] = map[string]int{}
	}
	l.kinds[server][kind]++
	l.maxTook[path] = max(l.maxTook[path], took)
	if took > l.maxAll {
		l.maxAll, l.maxWhat = took, what
	}
	if took > l.callTimeout {
		l.overTO++
	}
	for _, p := range problems {
		l.violationLocked(fmt.Sprintf("%s: %s: %s", what, p, detail))
	}
}

// lagProbe measures how late the scheduler runs a goroutine that sleeps lagTick at a time, in the same process
// and conditions as the soak's calls: the sum of its overshoots over a window is how much load delayed anything
// that waited on a timer in it.
type lagProbe struct {
	mu      sync.Mutex
	samples []lagSample // oldest first; a window of chaosLiveness
	stop    chan struct{}
	done    chan struct{}
}

type lagSample struct {
	at   time.Time
	late time.Duration // the overshoots so far
}

const lagTick = 50 * time.Millisecond

func startLagProbe() *lagProbe {
	p := &lagProbe{samples: []lagSample{{at: time.Now()}}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			began := time.Now()
			select {
			case <-p.stop:
				return
			case <-time.After(lagTick):
			}
			now := time.Now()
			p.mu.Lock()
			last := p.samples[len(p.samples)-1]
			p.samples = append(p.samples, lagSample{at: now, late: last.late + max(0, now.Sub(began)-lagTick)})
			if len(p.samples) > int(chaosLiveness/lagTick) {
				p.samples = p.samples[1:]
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// since is how late the probe ran from t0 until now, counting the sample in progress at t0 whole.
func (p *lagProbe) since(t0 time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.samples[len(p.samples)-1]
	base := p.samples[0].late
	for i := len(p.samples) - 1; i >= 0; i-- {
		if !p.samples[i].at.After(t0) {
			base = p.samples[i].late
			break
		}
	}
	return last.late - base + max(0, time.Since(last.at)-lagTick)
}

func (p *lagProbe) close() {
	close(p.stop)
	<-p.done
}

func (l *chaosLedger) violation(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.violationLocked(fmt.Sprintf(format, args...))
}

func (l *chaosLedger) violationLocked(msg string) {
	l.nViolation++
	if len(l.violations) < 25 {
		l.violations = append(l.violations, msg)
	}
}

func (l *chaosLedger) violationCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nViolation
}

func (l *chaosLedger) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	total := 0
	paths := slices.Sorted(maps.Keys(l.calls))
	for _, p := range paths {
		total += l.calls[p]
	}
	fmt.Fprintf(&b, "calls: %d (", total)
	for i, p := range paths {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d, max %s", p, l.calls[p], l.maxTook[p].Round(time.Millisecond))
	}
	fmt.Fprintf(&b, ")\nmax call time: %s, %s (bound %s); %d call(s) over CallTimeout %s\n",
		l.maxAll.Round(time.Millisecond), l.maxWhat, l.bound, l.overTO, l.callTimeout)
	for _, s := range slices.Sorted(maps.Keys(l.kinds)) {
		fmt.Fprintf(&b, "  %-8s", s)
		for _, k := range slices.Sorted(maps.Keys(l.kinds[s])) {
			fmt.Fprintf(&b, " %s=%d", k, l.kinds[s][k])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// classifyErr sorts a Go error of a tool handler. It must be a *ServerError naming server.
func classifyErr(server string, err error) (kind, problem string) {
	var se *upstream.ServerError
	if !errors.As(err, &se) {
		return kindBad, fmt.Sprintf("not a *ServerError: %T", err)
	}
	if se.Server != server {
		problem = fmt.Sprintf("names server %q, not %q", se.Server, server)
	}
	switch {
	case errors.Is(err, upstream.ErrClosed):
		kind = kindClosed
	case errors.Is(err, upstream.ErrToolGone):
		kind = kindGone
	case errors.Is(err, upstream.ErrUnavailable):
		kind = kindUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		kind = kindTimeout
	default:
		kind = kindServerError
	}
	return kind, problem
}

// classifyText sorts the failure text the runtime shows the model for a call that did not produce a result. A
// failure that comes from a server must name it.
func classifyText(server, msg string) (kind, problem string) {
	named := strings.Contains(msg, fmt.Sprintf("mcp server %q", server))
	switch {
	case strings.Contains(msg, upstream.ErrClosed.Error()):
		kind = kindClosed
	case strings.Contains(msg, upstream.ErrToolGone.Error()):
		kind = kindGone
	case strings.Contains(msg, ": "+upstream.ErrUnavailable.Error()):
		kind = kindUnavailable
	case strings.Contains(msg, "no answer within"):
		kind = kindTimeout
	case strings.Contains(msg, "refused the call"):
		kind, named = kindToolError, strings.Contains(msg, fmt.Sprintf("MCP server %q", server))
	case strings.HasPrefix(msg, "Unknown tool"):
		return kindUnknownTool, ""
	case named:
		kind = kindServerError
	default:
		return kindBad, "a failure that names no server"
	}
	if !named {
		problem = fmt.Sprintf("does not name server %q", server)
	}
	return kind, problem
}

// checkAnswer sorts a result the tool produced: the text of a successful echo must be this call's.
func checkAnswer(server, text string, isError bool, got string) (kind, problem string) {
	if isError {
		return kindToolError, ""
	}
	if want := echoPrefix[server] + text; got != want {
		return kindOK, fmt.Sprintf("answered %q, want %q", got, want)
	}
	return kindOK, ""
}

// catalogChecker decides whether one snapshot of Source.Tools is consistent: no duplicate ids, only servers of
// the config, each static server's exact listing, and for the flooder a listing the server really had, never
// older than one this rebuilder already saw.
type catalogChecker struct {
	flood *floodServer
}

func (c *catalogChecker) check(tools []catalog.Tool, lastFlood *int) error {
	ids := map[string]bool{}
	byServer := map[string][]string{}
	for _, tool := range tools {
		id := tool.ID()
		if ids[id] {
			return fmt.Errorf("duplicate tool %s", id)
		}
		ids[id] = true
		if tool.Source != catalog.SourceMCP || tool.Handler == nil {
			return fmt.Errorf("tool %s: source %q, handler %v", id, tool.Source, tool.Handler != nil)
		}
		byServer[tool.SourceName] = append(byServer[tool.SourceName], tool.Name)
	}
	for server, want := range chaosStaticTools {
		got := byServer[server]
		sort.Strings(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("server %s lists %v, want %v (tools of a server stay while it is down)", server, got, want)
		}
		delete(byServer, server)
	}
	names := byServer[srvFlooder]
	delete(byServer, srvFlooder)
	for server := range byServer {
		return fmt.Errorf("tools of a server that is not configured: %s", server)
	}
	v, ok := c.flood.versionOf(names)
	switch {
	case !ok:
		return fmt.Errorf("server flooder lists %v, which it never offered", names)
	case v < *lastFlood:
		return fmt.Errorf("server flooder went back from listing %d to %d (%v)", *lastFlood, v, names)
	}
	*lastFlood = v
	return nil
}

// floodServer adds and removes tools, each change a numbered version whose listing is remembered, and sends
// tools/list_changed by the hundred.
type floodServer struct {
	f *fakeServer

	mu       sync.Mutex
	live     []int // gen_<n> offered now, oldest first
	next     int
	version  int
	versions map[string]int // sorted tool names, joined → version

	sent      atomic.Int64 // raw tools/list_changed written
	mutations atomic.Int64

	obsMu    sync.Mutex
	observed []int         // per rebuilder: the newest version it saw
	bell     chan struct{} // closed and replaced whenever observed changes
}

func newFloodServer(rebuilders int) *floodServer {
	fs := &floodServer{f: newFakeServer(0), versions: map[string]int{}, observed: make([]int, rebuilders),
		bell: make(chan struct{})}
	fs.f.Srv = sdk.NewServer(&sdk.Implementation{Name: srvFlooder, Version: "1"},
		&sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}}})
	fs.f.AddTool("echo", "Echo the text back.", echo(echoPrefix[srvFlooder]))
	for range 2 {
		fs.addLocked()
	}
	fs.recordLocked()
	for i := range fs.observed {
		fs.observed[i] = -1
	}
	return fs
}

func (fs *floodServer) addLocked() {
	n := fs.next
	fs.next++
	fs.live = append(fs.live, n)
	fs.f.AddTool(fmt.Sprintf("gen_%d", n), fmt.Sprintf("Generated tool number %d; echoes the text.", n),
		echo(echoPrefix[srvFlooder]))
}

func (fs *floodServer) listingLocked() []string {
	names := []string{"echo"}
	for _, n := range fs.live {
		names = append(names, fmt.Sprintf("gen_%d", n))
	}
	sort.Strings(names)
	return names
}

func (fs *floodServer) recordLocked() {
	fs.version++
	fs.versions[strings.Join(fs.listingLocked(), ",")] = fs.version
}

// mutate makes the i-th change: two additions, then two removals of the oldest, and so on. The change and its
// record are one critical section, so a listing that shows the change is always found by versionOf.
func (fs *floodServer) mutate(i int) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if i%4 < 2 || len(fs.live) == 0 {
		fs.addLocked()
	} else {
		fs.f.Srv.RemoveTools(fmt.Sprintf("gen_%d", fs.live[0]))
		fs.live = fs.live[1:]
	}
	fs.recordLocked()
	fs.mutations.Add(1)
	return fs.version
}

func (fs *floodServer) versionOf(names []string) (int, bool) {
	names = slices.Clone(names)
	sort.Strings(names)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	v, ok := fs.versions[strings.Join(names, ",")]
	return v, ok
}

func (fs *floodServer) currentVersion() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.version
}

func (fs *floodServer) observe(rebuilder, v int) {
	fs.obsMu.Lock()
	defer fs.obsMu.Unlock()
	if v > fs.observed[rebuilder] {
		fs.observed[rebuilder] = v
		close(fs.bell)
		fs.bell = make(chan struct{})
	}
}

// seenBy reports whether every rebuilder has seen version v, and a channel closed at the next observation.
func (fs *floodServer) seenBy(v int) (bool, <-chan struct{}) {
	fs.obsMu.Lock()
	defer fs.obsMu.Unlock()
	return slices.Min(fs.observed) >= v, fs.bell
}

// notifyAll writes one tools/list_changed to every session the flooder has had; closed ones refuse it.
func (fs *floodServer) notifyAll(ctx context.Context) {
	for _, c := range fs.f.Conns() {
		msg := &jsonrpc.Request{Method: "notifications/tools/list_changed", Params: json.RawMessage(`{}`)}
		if c.Write(ctx, msg) == nil {
			fs.sent.Add(1)
		}
	}
}

// hangServer is in memory: every third call of sometimes_hangs never answers (until the caller gives up or the
// soak ends), and freeze makes the whole server mute.
type hangServer struct {
	f     *fakeServer
	calls atomic.Int64
	hangs atomic.Int64
}

func newHangServer(release <-chan struct{}) *hangServer {
	h := &hangServer{f: newFakeServer(0)}
	h.f.AddTool("echo", "Echo the text back.", echo(echoPrefix[srvHanger]))
	answer := echo(echoPrefix[srvHanger])
	h.f.AddTool("sometimes_hangs", "Echo the text back, or never answer.",
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if h.calls.Add(1)%3 == 0 {
				h.hangs.Add(1)
				select {
				case <-ctx.Done():
				case <-release:
				}
				return nil, errors.New("gave up hanging")
			}
			return answer(ctx, req)
		})
	return h
}

// garbageServer answers sometimes_garbage with junk now and then; echo always answers well (though a broken
// connection takes it down with the rest).
type garbageServer struct {
	calls   atomic.Int64
	garbage atomic.Int64
}

const garbageListing = `{"tools":[` +
	`{"name":"echo","description":"Echo the text back.",` +
	`"inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},` +
	`{"name":"sometimes_garbage","description":"Echo the text back, or garbage.",` +
	`"inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`

func (g *garbageServer) handle(method string, id, params json.RawMessage) string {
	switch method {
	case "tools/list":
		return result(id, garbageListing)
	case "tools/call":
	default:
		return ""
	}
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Text string `json:"text"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p)
	text, _ := json.Marshal(echoPrefix[srvGarbage] + p.Arguments.Text)
	good := result(id, `{"content":[{"type":"text","text":`+string(text)+`}]}`)
	if p.Name != "sometimes_garbage" {
		return good
	}
	n := g.calls.Add(1)
	if n%10 < 5 {
		return good
	}
	g.garbage.Add(1)
	switch n % 10 {
	case 5: // breaks the connection, three ways
		return [...]string{"panic: runtime error (this line is not JSON-RPC)", good + " trailing", "[1,2,3]"}[n/10%3]
	case 6:
		return result(id, `{"content":"not a list"}`)
	case 7: // an answer to a call nobody made; the real one never comes
		return result(json.RawMessage(strconv.FormatInt(1_000_000+n, 10)), `{"content":[]}`)
	case 8:
		return result(id, `{"isError":true,"content":[{"type":"text","text":"the tool failed on purpose"}]}`)
	default:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"invalid params on purpose"}}`, id)
	}
}

// progressCounter counts the Source's progress lines and keeps the last few for a failure message.
type progressCounter struct {
	mu      sync.Mutex
	changed int // "tools changed"
	failed  int
	ready   int
	last    []string
}

func (p *progressCounter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for line := range strings.Lines(string(b)) {
		switch {
		case strings.Contains(line, ": tools changed:"):
			p.changed++
		case strings.Contains(line, ": failed:"):
			p.failed++
		case strings.Contains(line, ": ready:"):
			p.ready++
		}
		if len(p.last) == 40 {
			p.last = p.last[1:]
		}
		p.last = append(p.last, strings.TrimSpace(line))
	}
	return len(b), nil
}

func (p *progressCounter) counts() (changed, failed, ready int, last []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed, p.failed, p.ready, slices.Clone(p.last)
}

// runSlot holds the newest run of a rebuilder; a replaced run is closed once the calls that use it are done.
type runSlot struct {
	mu      sync.Mutex
	cur     *liveRun
	retired sync.WaitGroup
}

func (s *runSlot) acquire() *liveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.calls.Add(1)
	}
	return s.cur
}

func (s *runSlot) swap(lr *liveRun, ledger *chaosLedger) {
	s.mu.Lock()
	old := s.cur
	s.cur = lr
	s.mu.Unlock()
	if old == nil {
		return
	}
	s.retired.Add(1)
	go func() {
		defer s.retired.Done()
		old.calls.Wait()
		if err := old.run.Close(); err != nil {
			ledger.violation("closing a run: %v", err)
		}
	}()
}

// openFDs lists this process's open file descriptors with what they point to.
func openFDs(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the descriptor ReadDir itself used
		}
		out[e.Name()] = target
	}
	return out
}

// children lists the live processes whose parent is this process, zombies included (a child nobody waited for
// is a leak too).
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	self := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 && fields[1] == self {
			out = append(out, e.Name()+" "+string(stat[:i+1])+" "+fields[0])
		}
	}
	return out
}

// waitFor waits, through the Source's change notifications rather than by polling, until cond holds; it gives up
// after chaosLiveness or when stop closes. It reports whether cond held.
func waitFor(src *upstream.Source, stop <-chan struct{}, cond func() bool) bool {
	deadline := time.NewTimer(chaosLiveness)
	defer deadline.Stop()
	for {
		changed := src.Changed()
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		case <-stop:
			return cond()
		}
	}
}

func statusOf(src *upstream.Source, name string) upstream.Status {
	for _, st := range src.Status() {
		if st.Name == name {
			return st
		}
	}
	return upstream.Status{}
}

func findTool(tools []catalog.Tool, server, name string) (catalog.Tool, bool) {
	for _, tool := range tools {
		if tool.SourceName == server && tool.Name == name {
			return tool, true
		}
	}
	return catalog.Tool{}, false
}

// chaosMenu is what the workers call, in turn; "gen" stands for one of the flooder's changing tools. The healthy
// server comes up twice as often as the others.
var chaosMenu = []struct{ server, tool string }{
	{srvHealthy, "echo"}, {srvCrasher, "echo"}, {srvHanger, "sometimes_hangs"}, {srvFlooder, "gen"},
	{srvGarbage, "sometimes_garbage"}, {srvHealthy, "echo"}, {srvHanger, "echo"}, {srvFlooder, "echo"},
	{srvGarbage, "echo"},
}

// pick resolves the i-th entry of chaosMenu against tools (of a snapshot or a run's catalog).
func pick(tools []*catalog.Tool, i int, rng *rand.Rand) (server string, tool *catalog.Tool) {
	m := chaosMenu[i%len(chaosMenu)]
	var gens []*catalog.Tool
	for _, t := range tools {
		if t.SourceName != m.server {
			continue
		}
		if m.tool == "gen" && strings.HasPrefix(t.Name, "gen_") {
			gens = append(gens, t)
		} else if t.Name == m.tool {
			return m.server, t
		}
	}
	if len(gens) > 0 {
		return m.server, gens[rng.IntN(len(gens))]
	}
	return m.server, nil
}

func pointers(tools []catalog.Tool) []*catalog.Tool {
	out := make([]*catalog.Tool, len(tools))
	for i := range tools {
		out[i] = &tools[i]
	}
	return out
}

func textArgs(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"text": text})
	return b
}

// toolCallOutcome sorts what tool_call showed the model: the {tool, result} envelope when the tool ran, the
// pipeline's failure text otherwise.
func toolCallOutcome(server, text, content string) (kind, detail, problem string) {
	var env struct {
		Tool   *struct{ ID string } `json:"tool"`
		Result struct {
			IsError bool              `json:"isError"`
			Content []catalog.Content `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(content), &env) == nil && env.Tool != nil {
		got := contentText(env.Result.Content)
		kind, problem = checkAnswer(server, text, env.Result.IsError, got)
		return kind, got, problem
	}
	kind, problem = classifyText(server, content)
	return kind, content, problem
}

// chaosSoak is one run of the soak: the Source over the five servers, what is built from it, and the counters.
type chaosSoak struct {
	src     *upstream.Source
	ledger  *chaosLedger
	flood   *floodServer
	hang    *hangServer
	garbage *garbageServer
	checker *catalogChecker

	stop      chan struct{} // ends the chaos, the rebuilders and the workers
	floodStop chan struct{} // ends the notification flood, after Close
	release   chan struct{} // lets hanging handlers go, at the very end

	codeRT, toolsRT *runtime.Runtime
	clientSess      *sdk.ClientSession // a client of toolsearch's own MCP server

	snapshot            atomic.Pointer[[]catalog.Tool] // the plain rebuilder's newest snapshot, for direct calls
	codeSlot, toolsSlot runSlot

	rebuilds, wakes   [chaosRebuilders]atomic.Int64
	searches          atomic.Int64
	crashes, freezes  atomic.Int64
	catchUps          atomic.Int64
	maxCrashRecovery  atomic.Int64 // a crash until the crasher is ready again
	maxFreezeRecovery atomic.Int64 // a freeze until the hanger is ready again
	maxCatchUp        atomic.Int64 // the flooder's last change until every rebuilder has seen it
	maxGoroutines     atomic.Int64
	workers, drivers  sync.WaitGroup
	floodDone         chan struct{}
}

// chaosRebuilders are the plain catalog (whose snapshot the direct callers use), the code-mode run and the
// tools-mode run. toolsearch's MCP server rebuilds its own run as well.
const chaosRebuilders = 3

func storeMax(a *atomic.Int64, d time.Duration) {
	for {
		old := a.Load()
		if int64(d) <= old || a.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

func (s *chaosSoak) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *chaosSoak) goDriver(f func()) {
	s.drivers.Add(1)
	go func() {
		defer s.drivers.Done()
		f()
	}()
}

func (s *chaosSoak) goWorker(f func()) {
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		f()
	}()
}

// rebuild turns every change of the Source into a new catalog, checking each snapshot it builds from. first is
// signalled once the first build is done.
func (s *chaosSoak) rebuild(r int, first chan<- struct{}) {
	lastFlood := -1
	for gen := 0; !s.stopped(); gen++ {
		changed := s.src.Changed() // before Tools, so no change falls between the two
		tools := s.src.Tools()
		if err := s.checker.check(tools, &lastFlood); err != nil {
			s.ledger.violation("rebuilder %d: inconsistent catalog: %v", r, err)
		}
		s.flood.observe(r, lastFlood)
		if err := s.build(r, tools, gen); err != nil {
			s.ledger.violation("rebuilder %d: building from %d tools: %v", r, len(tools), err)
		}
		s.rebuilds[r].Add(1)
		if gen == 0 {
			first <- struct{}{}
		}
		select {
		case <-changed:
			s.wakes[r].Add(1)
		case <-s.stop:
			return
		}
	}
}

func (s *chaosSoak) build(r int, tools []catalog.Tool, gen int) error {
	if r == 0 {
		if _, err := catalog.New(tools, nil); err != nil {
			return err
		}
		s.snapshot.Store(&tools)
		return nil
	}
	rt, slot, session := s.codeRT, &s.codeSlot, "soak-code"
	if r == 2 {
		rt, slot, session = s.toolsRT, &s.toolsSlot, "soak-tools"
	}
	run, err := rt.StartRun(context.Background(),
		runtime.RunRequest{SessionID: session, RunID: strconv.Itoa(gen), Tools: tools})
	if err != nil {
		return err
	}
	slot.swap(&liveRun{run: run}, s.ledger)
	return nil
}

// crashes the crasher every few seconds; the retry must bring a new process.
func (s *chaosSoak) crashDriver() {
	tick := time.NewTicker(4 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		before := statusOf(s.src, srvCrasher)
		tool, ok := findTool(s.src.Tools(), srvCrasher, "crash")
		if before.State != upstream.StateReady || !ok {
			continue
		}
		began := time.Now()
		res, err := tool.Handler.Call(context.Background(), json.RawMessage(`{}`))
		took := time.Since(began)
		kind, problem := kindOK, "the crash tool returned"
		if err != nil {
			kind, problem = classifyErr(srvCrasher, err)
		} else if res.IsError {
			kind = kindToolError
		}
		s.ledger.record("crash", srvCrasher, "crash", took, kind, fmt.Sprint(err), problem)
		s.crashes.Add(1)
		if !s.awaitReconnect(srvCrasher, before, "after a crash") {
			return
		}
		storeMax(&s.maxCrashRecovery, time.Since(began))
	}
}

// awaitReconnect waits for server to be ready on a later attempt than before, and records a violation when it
// is not back within chaosLiveness. It returns false when the soak is stopping.
func (s *chaosSoak) awaitReconnect(server string, before upstream.Status, after string) bool {
	back := waitFor(s.src, s.stop, func() bool {
		st := statusOf(s.src, server)
		return st.State == upstream.StateReady && st.Attempts > before.Attempts
	})
	if s.stopped() {
		return false
	}
	if !back {
		s.ledger.violation("%s: not back %s %s: %+v", server, chaosLiveness, after, statusOf(s.src, server))
	}
	return true
}

// freezes the hanger every few seconds until the Source has given up on it; thawed, it must be reconnected.
func (s *chaosSoak) freezeDriver() {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		before := statusOf(s.src, srvHanger)
		if before.State != upstream.StateReady {
			continue
		}
		s.hang.f.Freeze(true)
		s.freezes.Add(1)
		began := time.Now()
		down := waitFor(s.src, s.stop, func() bool { return statusOf(s.src, srvHanger).State == upstream.StateFailed })
		s.hang.f.Freeze(false)
		if s.stopped() {
			return
		}
		if !down {
			s.ledger.violation("hanger: frozen for %s while being called, and still not marked unavailable", chaosLiveness)
		}
		if !s.awaitReconnect(srvHanger, before, "after thawing") {
			return
		}
		storeMax(&s.maxFreezeRecovery, time.Since(began))
	}
}

// changes the flooder's tools for a second at a time (40 changes), then holds still until every rebuilder has
// caught up with the last change: a removed tool must leave every catalog.
func (s *chaosSoak) mutateDriver() {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; {
		for range 40 {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			s.flood.mutate(i)
			i++
		}
		v := s.flood.currentVersion()
		began := time.Now()
		deadline := time.NewTimer(chaosLiveness)
	wait:
		for {
			seen, bell := s.flood.seenBy(v)
			if seen {
				break
			}
			select {
			case <-bell:
			case <-s.stop:
				deadline.Stop()
				return
			case <-deadline.C:
				s.ledger.violation("flooder: listing %d is not in every catalog %s after the last change (%+v)",
					v, chaosLiveness, statusOf(s.src, srvFlooder))
				break wait
			}
		}
		deadline.Stop()
		s.catchUps.Add(1)
		storeMax(&s.maxCatchUp, time.Since(began))
	}
}

// notifyFlood sends tools/list_changed in bursts, about 400 a second, until floodStop (after Close).
func (s *chaosSoak) notifyFlood() {
	defer close(s.floodDone)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.floodStop:
			return
		case <-tick.C:
		}
		for range 8 {
			s.flood.notifyAll(context.Background())
		}
		storeMax(&s.maxGoroutines, time.Duration(goruntime.NumGoroutine()))
	}
}

// directWorker calls the tool handlers of the newest snapshot.
func (s *chaosSoak) directWorker(w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 1))
	for i := w; !s.stopped(); i++ {
		server, tool := pick(pointers(*s.snapshot.Load()), i, rng)
		if tool == nil {
			continue
		}
		text := fmt.Sprintf("direct-%d-%d", w, i)
		began := time.Now()
		res, err := tool.Handler.Call(context.Background(), textArgs(text))
		took := time.Since(began)
		if err != nil {
			kind, problem := classifyErr(server, err)
			s.ledger.record("direct", server, tool.Name, took, kind, err.Error(), problem)
			continue
		}
		got := contentText(res.Content)
		kind, problem := checkAnswer(server, text, res.IsError, got)
		s.ledger.record("direct", server, tool.Name, took, kind, got, problem)
	}
}

// toolsWorker runs tool_search and tool_call through the newest tools-mode run.
func (s *chaosSoak) toolsWorker(w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 2))
	for i := w; !s.stopped(); i++ {
		lr := s.toolsSlot.acquire()
		if i%4 == 3 {
			s.search(lr, fmt.Sprintf("search-%d-%d", w, i))
			lr.calls.Done()
			continue
		}
		server, tool := pick(lr.run.Catalog().Tools(), i, rng)
		if tool == nil {
			lr.calls.Done()
			continue
		}
		text := fmt.Sprintf("tools-%d-%d", w, i)
		args, _ := json.Marshal(map[string]any{"id": tool.ID(), "args": map[string]string{"text": text}})
		began := time.Now()
		res, err := lr.run.Execute(context.Background(),
			runtime.ToolCall{ID: fmt.Sprintf("call-%d-%d", w, i), Name: runtime.ToolCallName, Arguments: args})
		took := time.Since(began)
		lr.calls.Done()
		if err != nil {
			s.ledger.record("tool_call", server, tool.Name, took, kindBad, err.Error(), "Execute returned a Go error")
			continue
		}
		kind, detail, problem := toolCallOutcome(server, text, res.Content)
		s.ledger.record("tool_call", server, tool.Name, took, kind, detail, problem)
	}
}

// search runs tool_search: it must always work, and find only tools of the run's own catalog.
func (s *chaosSoak) search(lr *liveRun, id string) {
	began := time.Now()
	res, err := lr.run.Execute(context.Background(), runtime.ToolCall{ID: id, Name: runtime.ToolSearchName,
		Arguments: json.RawMessage(`{"query":"echo the text back","limit":10}`)})
	took := time.Since(began)
	s.searches.Add(1)
	var hits []catalog.Descriptor
	switch {
	case err != nil:
		s.ledger.violation("tool_search: %v", err)
	case res.IsError || json.Unmarshal(res.Details, &hits) != nil || len(hits) == 0:
		s.ledger.violation("tool_search failed or found nothing: %s", res.Content)
	}
	for _, h := range hits {
		if _, err := lr.run.Catalog().Lookup(h.ID); err != nil {
			s.ledger.violation("tool_search returned %s, which its own catalog does not have", h.ID)
		}
	}
	if took > s.ledger.bound {
		s.ledger.violation("tool_search took %s", took)
	}
}

// chaosScript searches, then makes several calls at once; each call settles to {ok, isError, text} or
// {ok: false, error}, so that one failure does not hide the others.
const chaosScript = `const hits = await openclaw.tools.search("echo the text back", {limit: 5});
const calls = %s;
const out = await Promise.all(calls.map(([id, text]) => openclaw.tools.call(id, {text}).then(
  r => ({ok: true, isError: !!r.result.isError, text: r.result.content.map(c => c.text || "").join("\n")}),
  e => ({ok: false, error: String(e && e.message || e)}))));
return {hits: hits.length, out};`

// codeWorker runs tool_search_code scripts through the newest code-mode run: four calls with Promise.all, the
// first always to the healthy server.
func (s *chaosSoak) codeWorker(w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 3))
	for i := w; !s.stopped(); i++ {
		lr := s.codeSlot.acquire()
		type planned struct{ server, tool, text string }
		var plan []planned
		var calls [][2]string
		for j := range 4 {
			k := i*4 + j
			if j == 0 {
				k = 0 // chaosMenu[0] is the healthy echo
			}
			server, tool := pick(lr.run.Catalog().Tools(), k, rng)
			if tool == nil {
				continue
			}
			text := fmt.Sprintf("code-%d-%d-%d", w, i, j)
			plan = append(plan, planned{server, tool.Name, text})
			calls = append(calls, [2]string{tool.ID(), text})
		}
		callsJSON, _ := json.Marshal(calls)
		code, _ := json.Marshal(map[string]string{"code": fmt.Sprintf(chaosScript, callsJSON)})
		began := time.Now()
		res, err := lr.run.Execute(context.Background(),
			runtime.ToolCall{ID: fmt.Sprintf("code-%d-%d", w, i), Name: runtime.ToolSearchCodeName, Arguments: code})
		took := time.Since(began)
		lr.calls.Done()
		var body struct {
			OK    bool
			Value struct {
				Hits int
				Out  []struct {
					OK, IsError bool
					Text, Error string
				}
			}
		}
		switch {
		case err != nil:
			s.ledger.violation("tool_search_code: Execute returned a Go error: %v", err)
			continue
		case json.Unmarshal(res.Details, &body) != nil || !body.OK || len(body.Value.Out) != len(plan):
			s.ledger.violation("tool_search_code failed after %s: %s", took, res.Content)
			continue
		}
		s.searches.Add(1)
		if body.Value.Hits == 0 {
			s.ledger.violation("tool_search_code: the search found nothing")
		}
		for j, p := range plan {
			o := body.Value.Out[j]
			var kind, detail, problem string
			if o.OK {
				kind, problem = checkAnswer(p.server, p.text, o.IsError, o.Text)
				detail = o.Text
			} else {
				kind, problem = classifyText(p.server, o.Error)
				detail = o.Error
			}
			// The calls ran together, so each took at most as long as the script.
			s.ledger.record("code", p.server, p.tool, took, kind, detail, problem)
		}
	}
}

// serveWorker is a client of toolsearch's own MCP server, which swaps its run at every change of the Source; it
// calls by the ids of the newest snapshot, which that run may not have yet (or any more).
func (s *chaosSoak) serveWorker() {
	rng := rand.New(rand.NewPCG(9, 4))
	for i := 0; !s.stopped(); i++ {
		server, tool := pick(pointers(*s.snapshot.Load()), i, rng)
		if tool == nil {
			continue
		}
		text := fmt.Sprintf("serve-%d", i)
		began := time.Now()
		res, err := s.clientSess.CallTool(context.Background(), &sdk.CallToolParams{Name: runtime.ToolCallName,
			Arguments: map[string]any{"id": tool.ID(), "args": map[string]string{"text": text}}})
		took := time.Since(began)
		if err != nil {
			s.ledger.record("serve", server, tool.Name, took, kindBad, err.Error(),
				"tools/call to toolsearch's MCP server failed")
			continue
		}
		var parts []string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		kind, detail, problem := toolCallOutcome(server, text, strings.Join(parts, "\n"))
		s.ledger.record("serve", server, tool.Name, took, kind, detail, problem)
	}
}

// warmUp opens what the process opens once and keeps (the poller, lazily started state of the SDK) with a Source
// of each kind, so that the baselines count only what the soak itself leaves behind.
func warmUp(t *testing.T) {
	t.Helper()
	mem := newFakeServer(0)
	mem.AddTool("echo", "Echo.", echo(""))
	raw := &garbageServer{}
	src, err := newSource(context.Background(), &upstream.Config{Servers: map[string]upstream.ServerConfig{
		"child": childConfig("echo"), "mem": {Command: "in-memory"}, "raw": {Command: "in-memory"},
	}}, fastOptions(nil), func(ctx context.Context, u *target) (*dialed, error) {
		switch u.name {
		case "mem":
			return mem.dial(ctx, u)
		case "raw":
			return rawDial(raw.handle)(ctx, u)
		}
		return dialConfigured(ctx, u)
	})
	require.NoError(t, err)
	for _, tool := range src.Tools() {
		if tool.Name == "echo" {
			_, err := tool.Handler.Call(context.Background(), textArgs("warm"))
			require.NoError(t, err, tool.ID())
		}
	}
	require.NoError(t, src.Close(context.Background()))
}

func TestSoakMCPChaos(t *testing.T) {
	requireProc(t)
	duration := chaosDuration(t)
	warmUp(t)
	lag := startLagProbe()
	defer lag.close()
	leakOpt := goleak.IgnoreCurrent()
	fdsBefore := openFDs(t)
	childrenBefore := children(t)

	s := &chaosSoak{
		ledger:    newChaosLedger(chaosCallTimeout, chaosCallBound),
		flood:     newFloodServer(chaosRebuilders),
		garbage:   &garbageServer{},
		stop:      make(chan struct{}),
		floodStop: make(chan struct{}),
		release:   make(chan struct{}),
		floodDone: make(chan struct{}),
	}
	s.hang = newHangServer(s.release)
	s.checker = &catalogChecker{flood: s.flood}
	s.ledger.lag = lag

	stderr := &syncBuffer{} // the children's "pid N" lines
	progress := &progressCounter{}
	cfg := &upstream.Config{Servers: map[string]upstream.ServerConfig{
		srvCrasher: childConfig("crash"),
		srvHealthy: childConfig("echo"),
		srvFlooder: {Command: "in-memory"},
		srvHanger:  {Command: "in-memory"},
		srvGarbage: {Command: "in-memory"},
	}}
	opts := &upstream.Options{
		Progress:      progress,
		ServerStderr:  stderr,
		StartTimeout:  chaosStartTimeout,
		CallTimeout:   chaosCallTimeout,
		CloseTimeout:  chaosCloseTimeout,
		RetryDelay:    100 * time.Millisecond,
		MaxRetryDelay: time.Second,
	}
	dial := func(ctx context.Context, u *target) (*dialed, error) {
		switch u.name {
		case srvFlooder:
			return s.flood.f.dial(ctx, u)
		case srvHanger:
			return s.hang.f.dial(ctx, u)
		case srvGarbage:
			return rawDial(s.garbage.handle)(ctx, u)
		}
		return dialConfigured(ctx, u) // the children, through the real process path
	}
	var err error
	s.src, err = newSource(context.Background(), cfg, opts, dial)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed { // a require failed half-way: leave nothing running for the next test
			close(s.stop)
			_ = s.src.Close(context.Background())
		}
	}()
	for _, st := range s.src.Status() {
		require.Equal(t, upstream.StateReady, st.State, "%s: %v", st.Name, st.Err)
	}

	// One sandbox shared by the code-mode runtime; toolsearch's MCP server runs on the tools-mode one.
	sb, err := hostfns.New(context.Background(), nil)
	require.NoError(t, err)
	s.codeRT, err = runtime.New(context.Background(), &runtime.Options{
		Config: runtime.Config{Enabled: true, Mode: runtime.ModeCode}, Sandbox: sb})
	require.NoError(t, err)
	require.Equal(t, runtime.ModeCode, s.codeRT.Mode(), s.codeRT.FallbackReason())
	s.toolsRT, err = runtime.New(context.Background(),
		&runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools}})
	require.NoError(t, err)
	server, err := NewServer(context.Background(), s.toolsRT, s.src, nil)
	require.NoError(t, err)
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- server.Run(context.Background(), toServerR, toClientW)
		toClientW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "soak-client", Version: "1"}, nil)
	s.clientSess, err = client.Connect(context.Background(), &sdk.IOTransport{Reader: toClientR, Writer: toServerW}, nil)
	require.NoError(t, err)

	first := make(chan struct{}, chaosRebuilders)
	for r := range chaosRebuilders {
		s.goDriver(func() { s.rebuild(r, first) })
	}
	for range chaosRebuilders {
		<-first
	}
	s.goDriver(s.crashDriver)
	s.goDriver(s.freezeDriver)
	s.goDriver(s.mutateDriver)
	go s.notifyFlood()
	for w := range 3 {
		s.goWorker(func() { s.directWorker(w) })
	}
	for w := range 2 {
		s.goWorker(func() { s.toolsWorker(w) })
		s.goWorker(func() { s.codeWorker(w) })
	}
	s.goWorker(s.serveWorker)

	// Let the chaos run; then stop it and close the Source while calls are still in flight and the flood goes on.
	began := time.Now()
	<-time.After(duration)
	statusBefore := s.src.Status()
	close(s.stop)
	s.ledger.closing.Store(true)
	closeBegan := time.Now()
	closeErr := s.src.Close(context.Background())
	closeTook := time.Since(closeBegan)
	closed = true
	chaosTook := closeBegan.Sub(began)

	allDone := make(chan struct{})
	go func() {
		s.workers.Wait()
		s.drivers.Wait()
		close(allDone)
	}()
	select {
	case <-allDone:
	case <-time.After(chaosLiveness):
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Fatalf("workers still busy %s after Close:\n%s", chaosLiveness, b.String())
	}
	close(s.floodStop)
	<-s.floodDone

	// Tear down the rest in the order a host would.
	require.NoError(t, s.clientSess.Close())
	require.NoError(t, <-served)
	require.NoError(t, server.Close())
	s.codeSlot.swap(nil, s.ledger)
	s.toolsSlot.swap(nil, s.ledger)
	s.codeSlot.retired.Wait()
	s.toolsSlot.retired.Wait()
	require.NoError(t, s.codeRT.Close(context.Background()))
	require.NoError(t, s.toolsRT.Close(context.Background()))
	require.NoError(t, sb.Close(context.Background()))
	close(s.release)

	relists, failures, readies, lastProgress := progress.counts()
	var reconnects []string
	for _, st := range statusBefore {
		reconnects = append(reconnects, fmt.Sprintf("%s %d", st.Name, st.Attempts-1))
	}
	ms := func(a *atomic.Int64) time.Duration { return time.Duration(a.Load()).Round(time.Millisecond) }
	t.Logf("MCP chaos: %s of chaos (SOAK_MCP_DURATION), CallTimeout %s, bound %s\n%s"+
		"searches: %d (tool_search and in scripts)\n"+
		"crasher: %d crashes, ready again within %s at most\n"+
		"hanger: %d freezes, ready again within %s at most; %d hung calls\n"+
		"garbage: %d of %d sometimes_garbage answers were garbage\n"+
		"reconnects: %s; progress: %d ready, %d failed, %d relists after tools/list_changed\n"+
		"notifications: %d tools/list_changed flooded, %d tool changes; "+
		"every catalog caught up %d times, within %s at most\n"+
		"rebuilds (plain, code, tools): %d/%d/%d after %d/%d/%d Changed wake-ups; at most %d goroutines\n"+
		"close: %s (CloseTimeout %s)",
		chaosTook.Round(time.Second), chaosCallTimeout, chaosCallBound, s.ledger.summary(),
		s.searches.Load(),
		s.crashes.Load(), ms(&s.maxCrashRecovery), s.freezes.Load(), ms(&s.maxFreezeRecovery), s.hang.hangs.Load(),
		s.garbage.garbage.Load(), s.garbage.calls.Load(),
		strings.Join(reconnects, ", "), readies, failures, relists,
		s.flood.sent.Load(), s.flood.mutations.Load(), s.catchUps.Load(), ms(&s.maxCatchUp),
		s.rebuilds[0].Load(), s.rebuilds[1].Load(), s.rebuilds[2].Load(),
		s.wakes[0].Load(), s.wakes[1].Load(), s.wakes[2].Load(),
		s.maxGoroutines.Load(), closeTook.Round(time.Millisecond), chaosCloseTimeout)

	// Every call ended in time, was classified and named its server; the catalog stayed consistent.
	if n := s.ledger.violationCount(); n > 0 {
		t.Errorf("%d violation(s); the first ones:\n  %s\nlast progress lines:\n  %s", n,
			strings.Join(s.ledger.violations, "\n  "), strings.Join(lastProgress, "\n  "))
	}
	// The chaos really happened.
	assert.Positive(t, s.crashes.Load(), "crashes")
	assert.Positive(t, s.freezes.Load(), "freezes")
	assert.Positive(t, s.hang.hangs.Load(), "hung calls")
	assert.Positive(t, s.garbage.garbage.Load(), "garbage answers")
	assert.Positive(t, s.catchUps.Load(), "flooder catch-ups")
	assert.Greater(t, s.flood.sent.Load(), int64(duration.Seconds())*100, "hundreds of notifications a second")
	s.ledger.mu.Lock()
	assert.Positive(t, s.ledger.kinds[srvHealthy][kindOK], "healthy calls")
	for _, kind := range []string{kindTimeout, kindUnavailable, kindServerError, kindToolError} {
		n := 0
		for _, byKind := range s.ledger.kinds {
			n += byKind[kind]
		}
		assert.Positive(t, n, "calls that ended as %s", kind)
	}
	s.ledger.mu.Unlock()

	// Close was bounded and clean.
	require.NoError(t, closeErr, "Close abandoned a session")
	assert.LessOrEqual(t, closeTook, chaosCloseTimeout+chaosSlack, "Close took longer than CloseTimeout + slack")
	for _, st := range s.src.Status() {
		assert.Equal(t, upstream.StateClosed, st.State, st.Name)
	}
	assert.Empty(t, s.src.Tools())

	// Nothing leaked: goroutines (goleak retries while they wind down), child processes, file descriptors.
	goleak.VerifyNone(t, leakOpt)
	childPids := pids(stderr.String(), "pid")
	assert.GreaterOrEqual(t, len(childPids), int(s.crashes.Load())+1,
		"a new crasher after each crash, and the healthy child")
	for _, pid := range childPids {
		assert.False(t, alive(t, pid), "process %d outlived Close", pid)
	}
	assert.ElementsMatch(t, childrenBefore, children(t), "child processes after Close")
	fdsAfter := openFDs(t)
	for fd, target := range fdsAfter {
		if fdsBefore[fd] != target {
			t.Errorf("file descriptor %s (%s) is open after Close", fd, target)
		}
	}
	t.Logf("leaks: none; %d child processes checked gone, %d open files before and %d after",
		len(childPids), len(fdsBefore), len(fdsAfter))
}

// TestSoakMCPChaosDetectors proves that every check of the chaos soak can fail: each detector is shown a case it
// must catch, next to one it must let pass.
func TestSoakMCPChaosDetectors(t *testing.T) {
	requireProc(t)
	t.Run("ledger", func(t *testing.T) {
		l := newChaosLedger(chaosCallTimeout, chaosCallBound)
		l.record("direct", srvHanger, "echo", chaosCallBound, kindTimeout, "", "")
		l.record("direct", srvHealthy, "echo", time.Millisecond, kindOK, "", "")
		require.Zero(t, l.violationCount(), l.violations)

		l.record("direct", srvHanger, "echo", chaosCallBound+time.Millisecond, kindTimeout, "", "")
		l.record("direct", srvHanger, "echo", chaosCallTimeout-time.Millisecond, kindTimeout, "", "")
		l.record("direct", srvHealthy, "echo", time.Millisecond, kindUnavailable, "", "")
		l.record("direct", srvGarbage, "echo", time.Millisecond, kindClosed, "", "")
		l.record("direct", srvGarbage, "echo", time.Millisecond, kindServerError, "", "names no server")
		require.Equal(t, 5, l.violationCount(), l.violations)

		l.closing.Store(true)
		l.record("direct", srvHealthy, "echo", time.Millisecond, kindClosed, "", "")
		assert.Equal(t, 5, l.violationCount(), "during Close, healthy calls may fail as closed")
		assert.Contains(t, l.summary(), "max call time: 4.001s")

		// Measured against an idle twin, a call that ran a second past the bound is still a violation.
		l = newChaosLedger(chaosCallTimeout, chaosCallBound)
		l.lag = startLagProbe()
		defer l.lag.close()
		time.Sleep(5 * lagTick)
		l.record("direct", srvHanger, "echo", chaosCallBound+time.Second, kindTimeout, "", "")
		assert.Equal(t, 1, l.violationCount(), l.violations)
	})

	t.Run("errors", func(t *testing.T) {
		timeout := &upstream.ServerError{Server: srvHanger, Op: "call x",
			Err: fmt.Errorf("no answer within 2s: %w", context.DeadlineExceeded)}
		kind, problem := classifyErr(srvHanger, timeout)
		assert.Equal(t, kindTimeout, kind)
		assert.Empty(t, problem)
		_, problem = classifyErr(srvGarbage, timeout)
		assert.Contains(t, problem, "names server")
		kind, problem = classifyErr(srvHanger, context.DeadlineExceeded)
		assert.Equal(t, kindBad, kind)
		assert.NotEmpty(t, problem)
		kind, _ = classifyErr(srvFlooder, &upstream.ServerError{Server: srvFlooder, Op: "call x", Err: upstream.ErrToolGone})
		assert.Equal(t, kindGone, kind)

		kind, problem = classifyText(srvCrasher,
			`Tool "mcp:crasher:echo" is unavailable: mcp server "crasher": call echo: unavailable (start: no answer within 3s)`)
		assert.Equal(t, kindUnavailable, kind)
		assert.Empty(t, problem)
		_, problem = classifyText(srvHanger,
			`Tool "mcp:crasher:echo" failed: mcp server "crasher": call echo: no answer within 2s`)
		assert.NotEmpty(t, problem, "a failure blamed on the wrong server")
		kind, problem = classifyText(srvHanger, `Tool "mcp:hanger:echo" failed: context deadline exceeded`)
		assert.Equal(t, kindBad, kind)
		assert.NotEmpty(t, problem)

		_, problem = checkAnswer(srvHealthy, "a", false, "echo: b")
		assert.NotEmpty(t, problem, "an answer that belongs to another call")
		_, problem = checkAnswer(srvHealthy, "a", false, "echo: a")
		assert.Empty(t, problem)
	})

	t.Run("catalog", func(t *testing.T) {
		flood := newFloodServer(1)
		checker := &catalogChecker{flood: flood}
		handler := catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) { return &catalog.Result{}, nil })
		tool := func(server, name string) catalog.Tool {
			return catalog.Tool{Source: catalog.SourceMCP, SourceName: server, Name: name, Handler: handler}
		}
		var good []catalog.Tool
		for server, names := range chaosStaticTools {
			for _, n := range names {
				good = append(good, tool(server, n))
			}
		}
		v1 := append(slices.Clone(good), tool(srvFlooder, "echo"), tool(srvFlooder, "gen_0"), tool(srvFlooder, "gen_1"))
		last := -1
		require.NoError(t, checker.check(v1, &last))
		flood.mutate(0) // gen_2 added
		flood.mutate(2) // gen_0 removed
		v3 := append(slices.Clone(good), tool(srvFlooder, "echo"), tool(srvFlooder, "gen_1"), tool(srvFlooder, "gen_2"))
		require.NoError(t, checker.check(v3, &last))
		assert.Equal(t, 3, last)

		assert.ErrorContains(t, checker.check(v1, &last), "went back", "a removed tool that comes back")
		last = -1
		assert.ErrorContains(t, checker.check(append(slices.Clone(v3), tool(srvFlooder, "gen_7")), &last), "never offered")
		assert.ErrorContains(t, checker.check(append(slices.Clone(v3), tool(srvHealthy, "echo")), &last), "duplicate")
		assert.ErrorContains(t, checker.check(append(slices.Clone(v3), tool("stranger", "x")), &last), "not configured")
		assert.ErrorContains(t, checker.check(v3[1:], &last), "lists")

		seen, _ := flood.seenBy(3)
		assert.False(t, seen, "no rebuilder has seen listing 3 yet")
		flood.observe(0, 3)
		seen, _ = flood.seenBy(3)
		assert.True(t, seen)
	})

	t.Run("leaks", func(t *testing.T) {
		before := openFDs(t)
		f, err := os.Open(os.Args[0])
		require.NoError(t, err)
		assert.Len(t, openFDs(t), len(before)+1, "an open file is seen")
		require.NoError(t, f.Close())
		assert.Equal(t, before, openFDs(t))

		kids := children(t)
		cmd := exec.Command("sleep", "60")
		require.NoError(t, cmd.Start())
		assert.True(t, alive(t, cmd.Process.Pid))
		assert.Len(t, children(t), len(kids)+1, "a running child is seen")
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		assert.False(t, alive(t, cmd.Process.Pid))
		assert.Equal(t, kids, children(t))
	})
}
