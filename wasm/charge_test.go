package wasm

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// incMem0 is mem[0]++, the count the tiny functions keep.
var incMem0 = []byte{0x41, 0x00, 0x41, 0x00, 0x28, 0x02, 0x00, 0x41, 0x01, 0x6a, 0x36, 0x02, 0x00}

func tinyBody(locals []byte, code ...[]byte) []byte {
	b := append([]byte{}, locals...)
	for _, c := range code {
		b = append(b, c...)
	}
	return append(b, 0x0b)
}

var noLocals = []byte{0x00}

// Which functions unchargedFuncs charges, on call graphs built by hand: every cycle keeps a charged function,
// and only those.
func TestUnchargedFuncsChargeOnlyCycles(t *testing.T) {
	const imported = 2 // functions 0 and 1 are imports; facts[i] is function i+2
	call := func(fs ...uint32) []uint32 { return fs }
	for name, tc := range map[string]struct {
		facts             []callFacts
		charged, notQuiet []int // indices into facts
	}{
		"a leaf":            {facts: []callFacts{{}}},
		"a chain of leaves": {facts: []callFacts{{callees: call(3)}, {callees: call(4)}, {}}},
		"a loop is charged at its header, not its entry":            {facts: []callFacts{{loops: true}, {callees: call(2)}}, notQuiet: []int{0, 1}},
		"touching the fuel is not quiet":                            {facts: []callFacts{{fuel: true}, {callees: call(2)}}, notQuiet: []int{0, 1}},
		"direct recursion":                                          {facts: []callFacts{{callees: call(2)}}, charged: []int{0}, notQuiet: []int{0}},
		"mutual recursion":                                          {facts: []callFacts{{callees: call(3)}, {callees: call(4)}, {callees: call(2)}, {callees: call(2)}}, charged: []int{1}, notQuiet: []int{0, 1, 2, 3}},
		"a cycle is charged in one of its functions":                {facts: []callFacts{{callees: call(3)}, {indirect: true, callees: call(4)}, {callees: call(2)}}, charged: []int{0}, notQuiet: []int{0, 1, 2}},
		"a call of an import is charged":                            {facts: []callFacts{{callees: call(1)}, {callees: call(2)}}, charged: []int{0}, notQuiet: []int{0, 1}},
		"a cycle beside a charged function":                         {facts: []callFacts{{callees: call(1)}, {callees: call(2, 4)}, {callees: call(5)}, {callees: call(4)}}, charged: []int{0, 3}, notQuiet: []int{0, 1, 2, 3}},
		"a call_indirect off every cycle is charged where it calls": {facts: []callFacts{{indirect: true, callees: call(3)}, {callees: call(4)}, {callees: call(3)}}, charged: []int{2}, notQuiet: []int{0, 1, 2}},
	} {
		t.Run(name, func(t *testing.T) {
			uncharged, quiet := unchargedFuncs(tc.facts, imported)
			for i := range tc.facts {
				assert.Equal(t, !contains(tc.charged, i), uncharged[i], "function %d charged", i+imported)
				assert.Equal(t, !contains(tc.notQuiet, i), quiet[i], "function %d quiet", i+imported)
			}
			requireEveryCycleCharged(t, tc.facts, imported, uncharged, quiet)
		})
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// On random call graphs, every cycle passes a charged function or a charged call_indirect: the graph of
// uncharged functions and their direct calls is acyclic, and they call no import.
func TestUnchargedFuncsBreakEveryCycleOfRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const imported = 3
	for range 2000 {
		n := 1 + rng.IntN(12)
		facts := make([]callFacts, n)
		for i := range facts {
			for range rng.IntN(4) {
				facts[i].callees = append(facts[i].callees, uint32(rng.IntN(n+imported)))
			}
			facts[i].indirect = rng.IntN(8) == 0
			facts[i].loops = rng.IntN(6) == 0
			facts[i].fuel = rng.IntN(6) == 0
		}
		uncharged, quiet := unchargedFuncs(facts, imported)
		requireEveryCycleCharged(t, facts, imported, uncharged, quiet)
	}
}

// requireEveryCycleCharged checks the two guarantees the rewrite rests on: the uncharged functions call no import
// and call each other directly without a cycle (their call_indirects are charged where they call); a quiet
// function is uncharged, has no loop and no call_indirect, touches no fuel and calls only quiet functions.
func requireEveryCycleCharged(t *testing.T, facts []callFacts, imported int, uncharged, quiet []bool) {
	t.Helper()
	state := make([]int, len(facts)) // 0 unseen, 1 on the path, 2 done
	var visit func(i int)
	visit = func(i int) {
		state[i] = 1
		for _, c := range facts[i].callees {
			j := int(c) - imported
			require.GreaterOrEqual(t, j, 0, "uncharged function %d calls import %d", i+imported, c)
			if !uncharged[j] {
				continue
			}
			require.NotEqual(t, 1, state[j], "a cycle of uncharged functions through %d", j+imported)
			if state[j] == 0 {
				visit(j)
			}
		}
		state[i] = 2
	}
	for i, f := range facts {
		if !uncharged[i] {
			continue
		}
		if state[i] == 0 {
			visit(i)
		}
		if quiet[i] {
			require.False(t, f.loops || f.fuel || f.indirect, "quiet function %d loops, touches the fuel or calls indirectly", i+imported)
			for _, c := range f.callees {
				require.True(t, quiet[int(c)-imported], "quiet function %d calls %d", i+imported, c)
			}
		}
	}
	for i := range facts {
		require.False(t, quiet[i] && !uncharged[i], "quiet function %d is charged", i+imported)
	}
}

// Applied: f loops ten times calling a quiet leaf g and a looping h; neither f, g nor h is on a cycle, so no entry
// is charged, the call of g keeps the fuel in f's local, and the fuel is exactly the loop iterations (f's 10
// and h's 3 a call), whatever the slices.
func TestUnchargedCalleesComputeTheSameAndChargeExactly(t *testing.T) {
	i32Local := []byte{0x01, 0x01, valI32}
	g := tinyBody(noLocals, incMem0)
	h := tinyBody(i32Local, []byte{0x03, 0x40}, incMem0, []byte{0x20, 0, 0x41, 1, 0x6a, 0x22, 0, 0x41, 3, 0x49, 0x0d, 0, 0x0b}) // 3 times
	f := tinyBody(i32Local, []byte{0x03, 0x40, 0x10, 2, 0x10, 3}, []byte{0x20, 0, 0x41, 1, 0x6a, 0x22, 0, 0x41, 10, 0x49, 0x0d, 0, 0x0b})
	const wantCount, wantFuel = 10 * (1 + 3), 10 + 10*3
	original := tinyModuleOf([]tinyFunc{{tinyVoid, f}, {tinyVoid, g}, {tinyVoid, h}}, nil)
	instrumented, stats, err := instrument(original)
	require.NoError(t, err)
	assert.Zero(t, stats.chargedFuncs)
	assert.Equal(t, 1, stats.quietCalls, "the call of g")

	requireSameCountExactFuel(t, original, instrumented, wantCount, wantFuel, 1, 2, 3, 7, 1000)
}

// Not applied: a function recursing to a depth of 50 is charged at each of its 51 entries, or, recursing through
// call_indirect, at each of its 50 call_indirects; and recursion that never ends, with no loop anywhere,
// directly, through another function or through call_indirect, is stopped at its budget (and not by the call
// stack running out).
func TestRecursionIsStillCharged(t *testing.T) {
	// r(n): mem[0]++; if n { r(n - 1) }, called by f as r(50).
	r := tinyBody(noLocals, incMem0, []byte{0x20, 0, 0x04, 0x40, 0x20, 0, 0x41, 1, 0x6b, 0x10, 2, 0x0b})
	f := tinyBody(noLocals, []byte{0x41, 50, 0x10, 2})
	deep, stats, err := instrument(tinyModuleOf([]tinyFunc{{tinyVoid, f}, {tinyI32, r}}, nil))
	require.NoError(t, err)
	assert.Equal(t, 1, stats.chargedFuncs, "r")
	// ri(n): mem[0]++; if n { table[0](n - 1) }, with ri in the table.
	ri := tinyBody(noLocals, incMem0, []byte{0x20, 0, 0x04, 0x40, 0x20, 0, 0x41, 1, 0x6b, 0x41, 0, 0x11, tinyI32, 0, 0x0b})
	deepIndirect, statsIndirect, err := instrument(tinyModuleOf([]tinyFunc{{tinyVoid, f}, {tinyI32, ri}}, []uint32{2}))
	require.NoError(t, err)
	assert.Zero(t, statsIndirect.chargedFuncs)
	assert.Equal(t, 1, statsIndirect.indirectSites)
	for _, slice := range []int64{1, 2, 7, 1000} {
		count, fuel := runTiny(t, deep, slice)
		assert.EqualValues(t, 51, count, "slice %d", slice)
		assert.EqualValues(t, 51, fuel, "slice %d", slice)
		count, fuel = runTiny(t, deepIndirect, slice)
		assert.EqualValues(t, 51, count, "slice %d, through call_indirect", slice)
		assert.EqualValues(t, 50, fuel, "slice %d, through call_indirect", slice)
	}

	callIndirect0 := []byte{0x41, 0, 0x11, tinyVoid, 0} // call_indirect (type [] -> []) table[0]
	for name, tc := range map[string]struct {
		funcs          []tinyFunc
		table          []uint32
		charged, sites int
	}{
		"itself":              {funcs: []tinyFunc{{tinyVoid, tinyBody(noLocals, incMem0, []byte{0x10, 1})}}, charged: 1},
		"through another":     {funcs: []tinyFunc{{tinyVoid, tinyBody(noLocals, incMem0, []byte{0x10, 2})}, {tinyVoid, tinyBody(noLocals, []byte{0x10, 1})}}, charged: 1},
		"through a pointer":   {funcs: []tinyFunc{{tinyVoid, tinyBody(noLocals, incMem0, []byte{0x10, 2})}, {tinyVoid, tinyBody(noLocals, callIndirect0)}}, table: []uint32{1}, sites: 1},
		"a pointer to itself": {funcs: []tinyFunc{{tinyVoid, tinyBody(noLocals, incMem0, callIndirect0)}}, table: []uint32{1}, sites: 1},
	} {
		t.Run(name, func(t *testing.T) {
			endless, stats, err := instrument(tinyModuleOf(tc.funcs, tc.table))
			require.NoError(t, err)
			assert.Equal(t, tc.charged, stats.chargedFuncs)
			assert.Equal(t, tc.sites, stats.indirectSites)
			const budget, slice = 200, 10
			count, fuel, err := runTinyBudget(t, endless, slice, budget)
			require.ErrorIs(t, err, errTinyBudget)
			assert.LessOrEqual(t, fuel, int64(budget+slice+1))
			assert.Greater(t, count, uint32(budget/len(tc.funcs)/2), "it ran until the budget")
		})
	}
}
