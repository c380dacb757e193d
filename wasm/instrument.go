package wasm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Instrumentation rewrites the QuickJS module once, at engine creation, so that the host keeps control of guest
// code without wazero's WithCloseOnContextDone (which made CPU-bound JS 3–5× slower here):
//
//   - fuel: every loop header, and the function entries and call_indirects chosen so that every cycle of calls
//     passes one (unchargedFuncs), decrement an exported i64 global (a counted loop is charged a chunk of
//     iterations at once, to the same total: countedLoopAt); when it drops below zero an appended function calls the existing import env.jsFunctionProxy with argc = hookFuel. The host then
//     checks the run's deadline and budget and either refills the global or aborts the run. Reusing the existing
//     import means no function index shifts, so the rewrite is local to the code section.
//   - bulk memory: memory.copy and memory.fill move up to the whole memory in one instruction,
//     so before each one of 1 KiB or more the length operand is charged as well, one unit per 64 bytes (about
//     what the interpreter burns in the time it takes to move them). Without the charge, a loop of 46 MiB copyWithin calls ran 21 s
//     past a 1 s deadline: each copy cost a few units, and the deadline is checked only when a slice runs out.
//     An instruction moving more than bulkChunk bytes becomes a call of an appended function doing the same in
//     pieces of bulkChunk, calling the host with argc = hookYield between them: one instruction is never
//     preempted, and a 46 MiB copy took 5-10 ms of CPU, which on a machine whose cores other work holds became a
//     quarter of a second before the deadline was seen, while the run held a Go processor others waited for.
//   - memory: every memory.grow that fails (returns -1) calls the host with argc = hookMemory, so a refused grow
//     is known to the host whoever refused it (the run's own cap or wazero's page limit) and whatever the
//     interpreter makes of it afterwards ("out of memory", or an exception it could not even allocate).
//   - qjs:bjson: the one function that references the module name "qjs:bjson" (the C function registering that
//     module) gets an empty body (returning NULL if it returns anything), so the module never exists. It reads and writes QuickJS bytecode,
//     which nothing here needs, and mutated bytecode crashes the interpreter.
//   - stack guard: every write of the C shadow-stack pointer (global 0) is preceded by an inline comparison of
//     the new value with an exported low-water mark; below it, the guard sets the mark to zero and traps, and
//     the host reads a zero mark after a trap as the stack limit. Without it, ~240 frames of JS recursion
//     silently corrupt the interpreter. (It used to call a host hook; a call there, even one never made, cost
//     more on every function's prologue than the comparison itself.) An epilogue writing back the value its
//     guarded prologue lowered is left as it is (stackRestore).
//
// Each rewritten function gets three scratch locals (an i64 for fuel, an i32 for the new stack pointer, an i32
// for a counted loop's bound), so the checks work on registers: reloading the fuel global and calling a guard
// function per stack-pointer write made metered CPU-bound JS +36% slower than unmetered; with the locals it was
// +18%, and with the fuel of looping functions in a local, the refuel call moved out of loops and the stack guard
// trapping instead of calling, about +10%. Counted loops charged a chunk at a time (countedLoopAt) and epilogues
// left unguarded took the instructions executed from 1.15x to 1.11x the unmetered module's, and charging only
// where every cycle of calls passes (83 of the 1,138 functions at entry, and the call_indirects of the others)
// to 1.08x (wasm.BenchmarkSandboxCPU; RATIONALE.md and bench/README.md have the measurements).
//
// The walker decodes every instruction the module uses and refuses anything it does not know: a silently
// mis-decoded immediate would shift every later instruction and corrupt the module.

// Sentinel argc values of the hook calls. QuickJS itself never passes a negative argc.
const (
	hookFuel   = -1
	hookMemory = -3
	hookYield  = -5
)

// Names of the globals the instrumented module exports to the host.
const (
	exportFuel       = "toolsearch_fuel"
	exportStackLow   = "toolsearch_stack_low"
	exportStackPoint = "toolsearch_stack_pointer"
)

// disabledModule is the QuickJS module the rewrite removes: its C registration function is made to return NULL,
// and the lines of the start-up script that import it (disabledImports) are blanked.
const disabledModule = "qjs:bjson"

var disabledImports = []string{"import * as bjson from 'qjs:bjson';\n", "globalThis.bjson = bjson;\n"}

// blankData replaces the one copy of text in the data section with spaces (keeping its final newline).
func blankData(payload []byte, text string) ([]byte, error) {
	at, err := dataAddresses(payload, []byte(text))
	if err != nil {
		return nil, err
	}
	if len(at) != 1 || bytes.Count(payload, []byte(text)) != 1 {
		return nil, fmt.Errorf("%w: %d copies of %q in the data", ErrUnsupportedModule, len(at), text)
	}
	blank := bytes.Repeat([]byte(" "), len(text)-1)
	return bytes.Replace(payload, []byte(text), append(blank, '\n'), 1), nil
}

// hookFuncs is how many hook functions the rewrite appends (one per sentinel argc), and bulkFuncs how many
// functions after them do large bulk memory instructions in pieces (copy, then fill).
const (
	hookFuncs = 2
	bulkFuncs = 2
)

// bulkChunk is the most bytes one memory.copy or memory.fill moves between two host checks: ~0.1 ms of memmove.
const bulkChunk = 1 << 20

// ErrUnsupportedModule means the module uses something the instrumenter does not understand (an unknown
// opcode, a second memory, no proxy import): running it uninstrumented would not be safe, so it is refused.
var ErrUnsupportedModule = errors.New("wasm: module not supported by the instrumenter")

// instrumentStats reports what the rewrite touched; tests use it to prove the rewrite reached every site.
type instrumentStats struct {
	functions     int // instrumented function bodies
	loops         int // loop headers given a fuel check
	countedLoops  int // of which counted loops, charged a chunk of iterations at a time
	bulkOps       int // bulk memory instructions charged by their length
	grows         int // memory.grow results checked for a refusal
	disabled      int // functions replaced because they register disabledModule
	stackWrites   int // writes of the stack pointer redirected through the guard
	stackRestores int // writes of the stack pointer left unguarded: restores of a guarded value (stackRestore)
	localFuel     int // functions (those with loops) that keep their fuel in a local
	chargedFuncs  int // functions charged at entry: those not uncharged (unchargedFuncs)
	quietCalls    int // calls from a function with a local counter to a quiet one, which skip the sync
	indirectSites int // call_indirect instructions charged themselves, in functions not charged at entry
	originalFuncs int // function index space size before the rewrite (imports + defined)
}

func instrument(wasmBytes []byte) ([]byte, instrumentStats, error) {
	var stats instrumentStats
	m, err := decodeModule(wasmBytes)
	if err != nil {
		return nil, stats, err
	}

	typeSec, importSec, funcSec := m.section(sectionType), m.section(sectionImport), m.section(sectionFunction)
	globalSec, exportSec, codeSec := m.section(sectionGlobal), m.section(sectionExport), m.section(sectionCode)
	if typeSec == nil || importSec == nil || funcSec == nil || globalSec == nil || exportSec == nil || codeSec == nil {
		return nil, stats, fmt.Errorf("%w: missing a type, import, function, global, export or code section", ErrUnsupportedModule)
	}

	types, err := decodeTypes(typeSec.payload)
	if err != nil {
		return nil, stats, err
	}
	imports, err := decodeImports(importSec.payload)
	if err != nil {
		return nil, stats, err
	}
	proxyIndex, importedFuncs, importedGlobals := -1, 0, 0
	for _, imp := range imports {
		switch imp.kind {
		case externFunc:
			if imp.module == "env" && imp.name == "jsFunctionProxy" {
				proxyIndex = importedFuncs
			}
			importedFuncs++
		case externGlobal:
			importedGlobals++
		}
	}
	if proxyIndex < 0 {
		return nil, stats, fmt.Errorf("%w: no env.jsFunctionProxy import", ErrUnsupportedModule)
	}
	if importedGlobals != 0 {
		return nil, stats, fmt.Errorf("%w: imported globals", ErrUnsupportedModule)
	}

	globalCount, globalRest, err := vectorItems(globalSec.payload)
	if err != nil {
		return nil, stats, err
	}
	// The C toolchain's __stack_pointer is global 0: a mutable i32.
	if globalCount == 0 || len(globalRest) < 2 || globalRest[0] != valI32 || globalRest[1] != 1 {
		return nil, stats, fmt.Errorf("%w: global 0 is not the mutable i32 stack pointer", ErrUnsupportedModule)
	}
	const spGlobal = 0
	if err := onlyStackPointerMutable(globalCount, globalRest); err != nil {
		return nil, stats, err
	}
	fuelGlobal, lowGlobal := globalCount, globalCount+1

	funcCount, funcRest, err := vectorItems(funcSec.payload)
	if err != nil {
		return nil, stats, err
	}
	funcTypes := make([]uint32, 0, (&reader{b: funcRest}).capacity(funcCount))
	fr := &reader{b: funcRest}
	for range funcCount {
		ti, err := fr.u32()
		if err != nil {
			return nil, stats, err
		}
		if int(ti) >= len(types) {
			return nil, stats, fmt.Errorf("%w: function type %d out of range", errMalformed, ti)
		}
		funcTypes = append(funcTypes, ti)
	}
	if err := fr.expectEnd(); err != nil {
		return nil, stats, err
	}
	stats.originalFuncs = importedFuncs + int(funcCount)
	refuelFunc := uint32(importedFuncs) + funcCount
	memoryFunc := refuelFunc + 1
	copyFunc, fillFunc := refuelFunc+hookFuncs, refuelFunc+hookFuncs+1

	voidType := typeIndex(&types, funcType{})
	bulkType := typeIndex(&types, funcType{params: []byte{valI32, valI32, valI32}})
	paramCounts := make([]int, len(funcTypes))
	for i, ti := range funcTypes {
		paramCounts[i] = len(types[ti].params)
	}
	typeSec.payload = encodeVector(types, func(b []byte, t funcType) []byte { return t.encode(b) })

	funcSec.payload = appendU32(nil, funcCount+hookFuncs+bulkFuncs)
	funcSec.payload = append(funcSec.payload, funcRest...)
	for range hookFuncs {
		funcSec.payload = appendU32(funcSec.payload, voidType)
	}
	for range bulkFuncs {
		funcSec.payload = appendU32(funcSec.payload, bulkType)
	}

	globalSec.payload = appendU32(nil, globalCount+2)
	globalSec.payload = append(globalSec.payload, globalRest...)
	globalSec.payload = append(globalSec.payload, valI64, 1, 0x42, 0x00, 0x0b) // mut i64 fuel = 0
	globalSec.payload = append(globalSec.payload, valI32, 1, 0x41, 0x00, 0x0b) // mut i32 low-water mark = 0

	exports, err := decodeExports(exportSec.payload)
	if err != nil {
		return nil, stats, err
	}
	for _, e := range exports {
		if e.name == exportFuel || e.name == exportStackLow || e.name == exportStackPoint {
			return nil, stats, fmt.Errorf("%w: export %q already exists", ErrUnsupportedModule, e.name)
		}
	}
	exports = append(exports,
		exportEntry{name: exportFuel, kind: externGlobal, index: fuelGlobal},
		exportEntry{name: exportStackLow, kind: externGlobal, index: lowGlobal},
		exportEntry{name: exportStackPoint, kind: externGlobal, index: spGlobal},
	)
	exportSec.payload = encodeVector(exports, encodeExport)

	dataSec := m.section(sectionData)
	if dataSec == nil {
		return nil, stats, fmt.Errorf("%w: no data section", ErrUnsupportedModule)
	}
	names, err := dataAddresses(dataSec.payload, []byte(disabledModule+"\x00"))
	if err != nil {
		return nil, stats, err
	}
	if len(names) != 1 {
		return nil, stats, fmt.Errorf("%w: %d copies of the module name %q", ErrUnsupportedModule, len(names), disabledModule)
	}
	// New_QJS runs a script that imports every module it registered into globals; its bjson lines become blanks
	// of the same length, so no offset in the data moves.
	for _, line := range disabledImports {
		if dataSec.payload, err = blankData(dataSec.payload, line); err != nil {
			return nil, stats, err
		}
	}

	codeCount, codeRest, err := vectorItems(codeSec.payload)
	if err != nil {
		return nil, stats, err
	}
	if codeCount != funcCount {
		return nil, stats, fmt.Errorf("%w: %d code bodies for %d functions", errMalformed, codeCount, funcCount)
	}
	bodies, err := codeBodies(codeRest, codeCount)
	if err != nil {
		return nil, stats, err
	}
	facts, err := scanBodies(bodies)
	if err != nil {
		return nil, stats, err
	}
	uncharged, quiet := unchargedFuncs(facts, importedFuncs)
	rw := rewriter{
		imported:   uint32(importedFuncs),
		uncharged:  uncharged,
		quiet:      quiet,
		fuelGlobal: fuelGlobal,
		refuelFunc: refuelFunc,
		spGlobal:   spGlobal,
		lowGlobal:  lowGlobal,
		memoryFunc: memoryFunc,
		copyFunc:   copyFunc,
		fillFunc:   fillFunc,
		bulkType:   bulkType,
		disabled:   int64(names[0]),
	}
	code := appendU32(make([]byte, 0, len(codeSec.payload)+len(codeSec.payload)/8), codeCount+hookFuncs+bulkFuncs)
	for _, body := range bodies {
		// A function with a loop keeps its fuel in a local; one without keeps it in the global, where its single
		// check at entry costs less than syncing the local around its calls would.
		local := facts[stats.functions].loops
		if local {
			stats.localFuel++
		}
		newBody, err := rw.body(body, paramCounts[stats.functions], local, !uncharged[stats.functions])
		if !uncharged[stats.functions] {
			stats.chargedFuncs++
		}
		if err != nil {
			return nil, stats, fmt.Errorf("function %d: %w", stats.functions+importedFuncs, err)
		}
		if rw.referencesDisabled {
			rw.referencesDisabled = false
			switch results := types[funcTypes[stats.functions]].results; {
			case len(results) == 0: // the toolchain dropped the unused result
				newBody = []byte{0x00, 0x0b} // no locals; end
			case len(results) == 1 && results[0] == valI32:
				newBody = []byte{0x00, 0x41, 0x00, 0x0b} // no locals; i32.const 0 (NULL); end
			default:
				return nil, stats, fmt.Errorf("%w: the function naming %q does not return a pointer", ErrUnsupportedModule, disabledModule)
			}
			stats.disabled++
		}
		code = appendU32(code, uint32(len(newBody)))
		code = append(code, newBody...)
		stats.functions++
	}
	if stats.disabled != 1 {
		return nil, stats, fmt.Errorf("%w: %d functions name %q", ErrUnsupportedModule, stats.disabled, disabledModule)
	}
	stats.loops, stats.bulkOps, stats.grows, stats.stackWrites = rw.loops, rw.bulkOps, rw.grows, rw.stackWrites
	stats.countedLoops, stats.stackRestores, stats.quietCalls = rw.countedLoops, rw.stackRestores, rw.quietCalls
	stats.indirectSites = rw.indirectSites

	// In the order of refuelFunc, memoryFunc.
	for _, argc := range []int64{hookFuel, hookMemory} {
		body := hookBody(uint32(proxyIndex), argc)
		code = appendU32(code, uint32(len(body)))
		code = append(code, body...)
	}
	for _, body := range [][]byte{bulkCopyBody(uint32(proxyIndex)), bulkFillBody(uint32(proxyIndex))} {
		code = appendU32(code, uint32(len(body)))
		code = append(code, body...)
	}
	codeSec.payload = code

	// DWARF sections describe the original code offsets, which the rewrite moved; wazero would also spend
	// milliseconds decoding them to symbolise every abort. Keep only sections that still hold.
	kept := m.sections[:0]
	for _, s := range m.sections {
		if s.id != sectionCustom || !isDebugSection(s.payload) {
			kept = append(kept, s)
		}
	}
	m.sections = kept
	return m.encode(), stats, nil
}

// onlyStackPointerMutable refuses a module with a mutable global other than the stack pointer (global 0): an
// instance is reset for reuse by setting the globals the host knows (instance.go), so one it did not know
// could carry a value from one run into the next.
func onlyStackPointerMutable(count uint32, rest []byte) error {
	r := &reader{b: rest}
	for i := range count {
		if _, err := r.byte(); err != nil { // value type
			return err
		}
		mut, err := r.byte()
		if err != nil {
			return err
		}
		if mut != 0 && i != 0 {
			return fmt.Errorf("%w: global %d is mutable", ErrUnsupportedModule, i)
		}
		// A constant expression: *.const or global.get, then end.
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x41, 0x23:
			_, err = r.sleb(32)
		case 0x42:
			_, err = r.sleb(64)
		case 0x43:
			_, err = r.bytes(4)
		case 0x44:
			_, err = r.bytes(8)
		default:
			err = fmt.Errorf("%w: global %d has initializer opcode 0x%02x", ErrUnsupportedModule, i, op)
		}
		if err != nil {
			return err
		}
		if end, err := r.byte(); err != nil || end != 0x0b {
			return fmt.Errorf("%w: global %d initializer does not end", errMalformed, i)
		}
	}
	return r.expectEnd()
}

func isDebugSection(payload []byte) bool {
	r := &reader{b: payload}
	name, err := r.name()
	return err != nil || strings.HasPrefix(name, ".debug")
}

func typeIndex(types *[]funcType, want funcType) uint32 {
	for i, t := range *types {
		if t.equal(want) {
			return uint32(i)
		}
	}
	*types = append(*types, want)
	return uint32(len(*types) - 1)
}

// fuelCheck is the sequence placed at a charged function's entry and at a loop header, with tmp an i64 scratch local:
// tmp = fuel - 1; fuel = tmp; if tmp < 0 { refuel() }.
func (rw *rewriter) fuelCheck(b []byte, tmp uint32) []byte {
	b = appendU32(append(b, 0x23), rw.fuelGlobal) // global.get fuel
	b = append(b, 0x42, 0x7f, 0x7c)               // i64.const -1; i64.add
	b = appendU32(append(b, 0x22), tmp)           // local.tee tmp
	b = appendU32(append(b, 0x24), rw.fuelGlobal) // global.set fuel
	b = appendU32(append(b, 0x20), tmp)           // local.get tmp
	b = append(b, 0x42, 0x00, 0x53)               // i64.const 0; i64.lt_s
	b = append(b, 0x04, 0x40, 0x10)               // if (no result); call
	b = appendU32(b, rw.refuelFunc)
	return append(b, 0x0b) // end
}

// A function with loops keeps its fuel in the i64 local fuel instead of the global: a loop header then costs a
// decrement and a compare on a register instead of a load and a store of the global, which was most of what
// metering cost on CPU-bound JS. The global stays the one the host and every other function see: the local is
// loaded from it at entry and after every call, and written back before every call and every way out of the
// function (return, a branch to the function's label, falling off its end) and before the hooks. Every check
// still subtracts what it did from the same running count, in the same order, so the fuel a script uses and the
// point where a slice runs out are exactly what they were with the global.

// syncFuel writes the local counter back to the global: fuel = local.
func (rw *rewriter) syncFuel(b []byte, fuel uint32) []byte {
	b = appendU32(append(b, 0x20), fuel)             // local.get fuel
	return appendU32(append(b, 0x24), rw.fuelGlobal) // global.set fuel
}

// reloadFuel reads the global after a call: local = fuel.
func (rw *rewriter) reloadFuel(b []byte, fuel uint32) []byte {
	b = appendU32(append(b, 0x23), rw.fuelGlobal) // global.get fuel
	return appendU32(append(b, 0x21), fuel)       // local.set fuel
}

// refuelLocal is the tail of a local check, the counter having gone negative: sync; refuel(); reload.
func (rw *rewriter) refuelLocal(b []byte, fuel uint32) []byte {
	b = append(b, 0x42, 0x00, 0x53, 0x04, 0x40) // i64.const 0; i64.lt_s; if (no result)
	b = rw.syncFuel(b, fuel)
	b = appendU32(append(b, 0x10), rw.refuelFunc) // call refuel
	b = rw.reloadFuel(b, fuel)
	return append(b, 0x0b) // end
}

// fuelEntryLocal starts a function with a local counter: local = fuel - 1; if local < 0 { sync; refuel(); reload }.
func (rw *rewriter) fuelEntryLocal(b []byte, fuel uint32) []byte {
	b = appendU32(append(b, 0x23), rw.fuelGlobal) // global.get fuel
	b = append(b, 0x42, 0x7f, 0x7c)               // i64.const -1; i64.add
	b = appendU32(append(b, 0x22), fuel)          // local.tee fuel
	return rw.refuelLocal(b, fuel)
}

// fuelLoopLocal is the loop header check on the local: local = local - 1; if local < 0 { sync; refuel(); reload }.
func (rw *rewriter) fuelLoopLocal(b []byte, fuel uint32) []byte {
	b = appendU32(append(b, 0x20), fuel) // local.get fuel
	b = append(b, 0x42, 0x7f, 0x7c)      // i64.const -1; i64.add
	b = appendU32(append(b, 0x22), fuel) // local.tee fuel
	return rw.refuelLocal(b, fuel)
}

// bulkChargeLocal is bulkCharge on the local counter.
func (rw *rewriter) bulkChargeLocal(b []byte, len32, fuel uint32) []byte {
	b = appendU32(append(b, 0x22), len32)      // local.tee len32 (the instruction keeps its operand)
	b = appendU32(append(b, 0x20), len32)      // local.get len32
	b = append(b, 0x41)                        // i32.const
	b = appendS64(b, bulkChargeFrom)           //   bulkChargeFrom
	b = append(b, 0x4f, 0x04, 0x40)            // i32.ge_u; if (no result)
	b = appendU32(append(b, 0x20), fuel)       //   local.get fuel
	b = appendU32(append(b, 0x20), len32)      //   local.get len32
	b = append(b, 0xad, 0x42, bulkChargeShift) //   i64.extend_i32_u; i64.const shift
	b = append(b, 0x88, 0x7d)                  //   i64.shr_u; i64.sub
	b = appendU32(append(b, 0x22), fuel)       //   local.tee fuel
	b = rw.refuelLocal(b, fuel)
	return append(b, 0x0b) // end
}

// bulkSplit follows bulkCharge: the stack holds the instruction's three operands, len32 the length, and instr is
// the instruction itself (memory.copy or memory.fill). len32 > bulkChunk ? call copyFunc/fillFunc : instr.
func (rw *rewriter) bulkSplit(b []byte, len32, sub uint32, instr []byte) []byte {
	fn := rw.copyFunc
	if sub == 11 {
		fn = rw.fillFunc
	}
	b = appendU32(append(b, 0x20), len32) // local.get len32
	b = append(b, 0x41)                   // i32.const
	b = appendS64(b, bulkChunk)           //   bulkChunk
	b = append(b, 0x4b, 0x04)             // i32.gt_u; if [i32 i32 i32] -> []
	b = appendS64(b, int64(rw.bulkType))
	b = appendU32(append(b, 0x10), fn) //   call
	b = append(b, 0x05)                // else
	b = append(b, instr...)            //   the instruction
	return append(b, 0x0b)             // end
}

// bulkBounds is the start of bulkCopyBody and bulkFillBody: when the range of local a (and of local other, for a
// copy) runs past the memory, the whole instruction runs at once, so it traps before writing anything, as the
// original would.
func bulkBounds(b []byte, other bool, instr []byte) []byte {
	past := func(b []byte, local byte) []byte {
		b = append(b, 0x20, local, 0xad, 0x20, 2, 0xad, 0x7c)    // local.get x; i64.extend_i32_u; local.get n; i64.extend_i32_u; i64.add
		return append(b, 0x3f, 0x00, 0xad, 0x42, 16, 0x86, 0x56) // memory.size; i64.extend_i32_u; i64.const 16; i64.shl; i64.gt_u
	}
	b = past(b, 0)
	if other {
		b = past(b, 1)
		b = append(b, 0x72) // i32.or
	}
	b = append(b, 0x04, 0x40, 0x20, 0, 0x20, 1, 0x20, 2) // if; local.get 0 1 2
	b = append(b, instr...)
	return append(b, 0x0f, 0x0b) // return; end
}

// bulkStep appends c = min(n, bulkChunk) (locals 2 and 3).
func bulkStep(b []byte) []byte {
	b = append(b, 0x20, 2, 0x41)
	b = appendS64(b, bulkChunk)
	b = append(b, 0x20, 2, 0x41)
	b = appendS64(b, bulkChunk)
	return append(b, 0x49, 0x1b, 0x21, 3) // i32.lt_u; select; local.set c
}

// bulkCopyBody is memory.copy(dst, src, n) (locals 0, 1, 2) in pieces of bulkChunk with a yield hook between
// them: upwards when dst <= src, downwards otherwise, so that overlapping ranges copy as one instruction would.
func bulkCopyBody(proxyFunc uint32) []byte {
	instr := []byte{0xfc, 0x0a, 0x00, 0x00}
	b := []byte{0x01, 0x01, valI32} // one i32 local: c
	b = bulkBounds(b, true, instr)
	b = append(b, 0x20, 0, 0x20, 1, 0x4d, 0x04, 0x40) // local.get dst; local.get src; i32.le_u; if
	b = append(b, 0x03, 0x40)                         //   loop
	b = bulkStep(b)
	b = append(b, 0x20, 0, 0x20, 1, 0x20, 3)                   // local.get dst src c
	b = append(b, instr...)                                    // memory.copy
	b = append(b, 0x20, 0, 0x20, 3, 0x6a, 0x21, 0)             // dst += c
	b = append(b, 0x20, 1, 0x20, 3, 0x6a, 0x21, 1)             // src += c
	b = append(b, 0x20, 2, 0x20, 3, 0x6b, 0x22, 2, 0x04, 0x40) // n -= c; if n
	b = hookCall(b, proxyFunc, hookYield)
	b = append(b, 0x0c, 1, 0x0b, 0x0b) // br loop; end; end loop
	b = append(b, 0x05, 0x03, 0x40)    // else; loop
	b = bulkStep(b)
	b = append(b, 0x20, 2, 0x20, 3, 0x6b, 0x21, 2)                         // n -= c
	b = append(b, 0x20, 0, 0x20, 2, 0x6a, 0x20, 1, 0x20, 2, 0x6a, 0x20, 3) // dst+n; src+n; c
	b = append(b, instr...)                                                // memory.copy
	b = append(b, 0x20, 2, 0x04, 0x40)                                     // if n
	b = hookCall(b, proxyFunc, hookYield)
	return append(b, 0x0c, 1, 0x0b, 0x0b, 0x0b, 0x0b) // br loop; end; end loop; end if; end
}

// bulkFillBody is memory.fill(dst, value, n) (locals 0, 1, 2) in pieces of bulkChunk with a yield hook between
// them.
func bulkFillBody(proxyFunc uint32) []byte {
	instr := []byte{0xfc, 0x0b, 0x00}
	b := []byte{0x01, 0x01, valI32}
	b = bulkBounds(b, false, instr)
	b = append(b, 0x03, 0x40) // loop
	b = bulkStep(b)
	b = append(b, 0x20, 0, 0x20, 1, 0x20, 3)
	b = append(b, instr...)                                    // memory.fill
	b = append(b, 0x20, 0, 0x20, 3, 0x6a, 0x21, 0)             // dst += c
	b = append(b, 0x20, 2, 0x20, 3, 0x6b, 0x22, 2, 0x04, 0x40) // n -= c; if n
	b = hookCall(b, proxyFunc, hookYield)
	return append(b, 0x0c, 1, 0x0b, 0x0b, 0x0b) // br loop; end; end loop; end
}

// loopWrappers is how many labels loopHead puts around a loop.
const loopWrappers = 3

// loopHead replaces `loop bt` and starts its body with the fuel check. The refuel call is not in the loop: a
// call there, even on a path never taken, made wazero keep the loop's live values out of registers, and the
// check cost several instructions more per iteration than its own. Instead a negative count leaves the loop for
// a handler after it, which refuels and enters the loop again (its state is all in locals, so re-entering at the
// header is the same as continuing):
//
//	block bt          ;; done
//	  loop            ;; retry
//	    block         ;; exhausted
//	      loop bt     ;; the original loop
//	        <count down; br_if exhausted when negative>
//	        ...original body...
//	      end
//	      br done     ;; the loop ended normally, with its results
//	    end
//	    <refuel; give back the unit the header will charge again>
//	    br retry
//	  end
//	  unreachable
//	end
func (rw *rewriter) loopHead(b []byte, bt byte, local bool, fuel uint32) []byte {
	b = append(b, 0x02, bt, 0x03, 0x40, 0x02, 0x40, 0x03, bt)
	if local {
		b = appendU32(append(b, 0x20), fuel) // local.get fuel
		b = append(b, 0x42, 0x7f, 0x7c)      // i64.const -1; i64.add
		b = appendU32(append(b, 0x22), fuel) // local.tee fuel
	} else {
		b = appendU32(append(b, 0x23), rw.fuelGlobal) // global.get fuel
		b = append(b, 0x42, 0x7f, 0x7c)               // i64.const -1; i64.add
		b = appendU32(append(b, 0x22), fuel)          // local.tee tmp
		b = appendU32(append(b, 0x24), rw.fuelGlobal) // global.set fuel
		b = appendU32(append(b, 0x20), fuel)          // local.get tmp
	}
	return append(b, 0x42, 0x00, 0x53, 0x0d, 0x01) // i64.const 0; i64.lt_s; br_if exhausted
}

// loopTail follows the original loop's end: the rest of the structure loopHead began.
func (rw *rewriter) loopTail(b []byte, local bool, fuel uint32) []byte {
	b = append(b, 0x0c, 0x02, 0x0b) // br done; end (exhausted)
	if local {
		b = rw.syncFuel(b, fuel)
	}
	b = appendU32(append(b, 0x10), rw.refuelFunc) // call refuel
	b = appendU32(append(b, 0x23), rw.fuelGlobal) // global.get fuel
	b = append(b, 0x42, 0x01, 0x7c)               // i64.const 1; i64.add
	if local {
		b = appendU32(append(b, 0x21), fuel) // local.set fuel
	} else {
		b = appendU32(append(b, 0x24), rw.fuelGlobal) // global.set fuel
	}
	return append(b, 0x0c, 0x00, 0x0b, 0x00, 0x0b) // br retry; end (retry); unreachable; end (done)
}

// isBulkMemory reports the 0xfc sub-opcodes whose cost grows with a length operand on top of the stack:
// memory.copy and memory.fill.
func isBulkMemory(sub uint32) bool { return sub == 10 || sub == 11 }

// bulkChargeShift makes a bulk memory instruction cost one fuel unit per 2^bulkChargeShift bytes: Go's memmove
// moves 64 bytes in about the time the interpreter spends on one unit (~6 ns), so a fuel slice bounds wall time
// whichever instructions fill it.
const bulkChargeShift = 6

// bulkChargeFrom is the smallest length a bulk memory instruction is charged for. Below it a copy takes well
// under a microsecond and the code around it burns fuel anyway, so the charge (and its cost on every small memcpy
// of the interpreter: 5% on CPU-bound JS) is skipped: a fuel slice still bounds wall time to about a millisecond.
const bulkChargeFrom = 1024

// bulkCharge goes before a bulk memory instruction, whose length is on top of the stack, with len32 an i32 and tmp
// an i64 scratch local; it leaves the stack as it found it:
// len32 = n; if len32 >= bulkChargeFrom { tmp = fuel - (n >> bulkChargeShift); fuel = tmp; if tmp < 0 { refuel() } }.
func (rw *rewriter) bulkCharge(b []byte, len32, tmp uint32) []byte {
	b = appendU32(append(b, 0x22), len32)         // local.tee len32 (the instruction keeps its operand)
	b = appendU32(append(b, 0x20), len32)         // local.get len32
	b = append(b, 0x41)                           // i32.const
	b = appendS64(b, bulkChargeFrom)              //   bulkChargeFrom
	b = append(b, 0x4f, 0x04, 0x40)               // i32.ge_u; if (no result)
	b = appendU32(append(b, 0x23), rw.fuelGlobal) //   global.get fuel
	b = appendU32(append(b, 0x20), len32)         //   local.get len32
	b = append(b, 0xad, 0x42, bulkChargeShift)    //   i64.extend_i32_u; i64.const shift
	b = append(b, 0x88, 0x7d)                     //   i64.shr_u; i64.sub
	b = appendU32(append(b, 0x22), tmp)           //   local.tee tmp
	b = appendU32(append(b, 0x24), rw.fuelGlobal) //   global.set fuel
	b = appendU32(append(b, 0x20), tmp)           //   local.get tmp
	b = append(b, 0x42, 0x00, 0x53)               //   i64.const 0; i64.lt_s
	b = append(b, 0x04, 0x40, 0x10)               //   if (no result); call
	b = appendU32(b, rw.refuelFunc)
	return append(b, 0x0b, 0x0b) // end; end
}

// growCheck follows memory.grow, whose result is on top of the stack, with res an i32 scratch local; it leaves
// the result in place: res = result; if res == -1 { memoryRefused() }; res.
func (rw *rewriter) growCheck(b []byte, res uint32) []byte {
	b = appendU32(append(b, 0x22), res)    // local.tee res
	b = append(b, 0x41, 0x7f, 0x46)        // i32.const -1; i32.eq
	b = append(b, 0x04, 0x40, 0x10)        // if (no result); call
	b = appendU32(b, rw.memoryFunc)        // memoryRefused
	b = append(b, 0x0b)                    // end
	return appendU32(append(b, 0x20), res) // local.get res
}

// stackCheck replaces a global.set of the stack pointer, with tmp an i32 scratch local:
// tmp = new; if tmp < low { low = 0; trap }; sp = tmp.
// In a function that keeps its fuel in the local fuel, the local is written back first, so the fuel the run
// reports is exact when the guard ends it.
func (rw *rewriter) stackCheck(b []byte, tmp uint32, local bool, fuel uint32) []byte {
	b = appendU32(append(b, 0x22), tmp)          // local.tee tmp
	b = appendU32(append(b, 0x23), rw.lowGlobal) // global.get low
	b = append(b, 0x49, 0x04, 0x40)              // i32.lt_u; if
	if local {
		b = rw.syncFuel(b, fuel)
	}
	b = appendU32(append(b, 0x41, 0x00, 0x24), rw.lowGlobal) // i32.const 0; global.set low: the host's mark
	b = append(b, 0x00, 0x0b)                                // unreachable; end
	b = appendU32(append(b, 0x20), tmp)                      // local.get tmp
	return appendU32(append(b, 0x24), rw.spGlobal)           // global.set sp
}

// hookCall calls env.jsFunctionProxy(0, 0, argc, 0) and drops its result.
func hookCall(b []byte, proxyFunc uint32, argc int64) []byte {
	b = append(b, 0x41, 0x00, 0x42, 0x00, 0x41) // i32.const 0; i64.const 0; i32.const
	b = appendS64(b, argc)
	b = append(b, 0x41, 0x00, 0x10) // i32.const 0; call
	b = appendU32(b, proxyFunc)
	return append(b, 0x1a) // drop
}

// hookBody is an appended function that reports to the host with a sentinel argc.
func hookBody(proxyFunc uint32, argc int64) []byte {
	b := []byte{0x00} // no locals
	b = hookCall(b, proxyFunc, argc)
	return append(b, 0x0b)
}

type rewriter struct {
	imported               uint32 // imported functions, which come first in the index space
	uncharged, quiet       []bool // per defined function: see unchargedFuncs
	quietCalls             int
	indirectSites          int
	fuelGlobal, refuelFunc uint32
	spGlobal, lowGlobal    uint32
	memoryFunc             uint32
	copyFunc, fillFunc     uint32 // bulkCopyBody, bulkFillBody
	bulkType               uint32 // [i32 i32 i32] -> []
	disabled               int64  // address of disabledModule's name in memory
	referencesDisabled     bool   // the body just rewritten loads that address
	loops                  int
	countedLoops           int
	stackRestores          int
	bulkOps                int
	grows                  int
	stackWrites            int
}

// maxLocals is the most locals a function may declare (wazero's and the engines' common limit).
const maxLocals = 50000

// body rewrites one function body: the locals are copied and scratch locals appended, a fuel check goes first
// when charge is set, and before every call_indirect when it is not (see unchargedFuncs; a function keeping its
// fuel in a local loads it there either way), then every instruction is decoded so that loop headers and
// stack-pointer writes are found exactly.
func (rw *rewriter) body(body []byte, params int, local, charge bool) ([]byte, error) {
	r := &reader{b: body}
	groups, err := r.u32()
	if err != nil {
		return nil, err
	}
	declStart := r.pos
	declared, err := r.localGroups(groups)
	if err != nil {
		return nil, err
	}
	locals := uint64(params) + declared
	if locals+3 > maxLocals {
		return nil, fmt.Errorf("%w: more than %d locals", errMalformed, maxLocals)
	}
	fuelTmp, stackTmp, boundTmp := uint32(locals), uint32(locals)+1, uint32(locals)+2
	out := make([]byte, 0, len(body)+len(body)/4+32)
	out = appendU32(out, groups+2)
	out = append(out, body[declStart:r.pos]...)
	out = append(out, 1, valI64, 2, valI32)
	switch {
	case local && charge:
		out = rw.fuelEntryLocal(out, fuelTmp)
	case local:
		out = rw.reloadFuel(out, fuelTmp)
	case charge:
		out = rw.fuelCheck(out, fuelTmp)
	}
	copied := r.pos
	// syncBefore writes the local counter back to the global before the instruction that starts at start: a
	// call (whose callee, and the host, work on the global), or an exit from the function.
	syncBefore := func(start int) {
		if local {
			out = append(out, body[copied:start]...)
			out = rw.syncFuel(out, fuelTmp)
			copied = start
		}
	}

	// frames are the open structures, the function body first. A loop is wrapped (see loopHead): branches
	// from inside it to a structure outside cross its three wrapper labels, so their label numbers are shifted.
	frames := []bool{false} // wrapped
	// frameIDs name the open structures (an if's else arm gets a new name) for stackRestore: an instruction
	// runs before every later one in the structure it sits in, while that structure is open.
	frameIDs, nextID := []int{0}, 1
	open := func() { frameIDs, nextID = append(frameIDs, nextID), nextID+1 }
	var starts []int // where each instruction read so far starts
	saves := map[uint32]stackSave{}
	writes := localWrites(body, r.pos)
	// label maps a branch label read at the current position to the one the rewritten body needs.
	label := func(l uint32) (uint32, bool) {
		target := len(frames) - 1 - int(l)
		if target < 0 {
			return 0, false
		}
		shifted := l
		for i := target + 1; i < len(frames); i++ {
			if frames[i] {
				shifted += loopWrappers
			}
		}
		return shifted, true
	}
	// counted is the counted loop being copied (see countedLoopAt; they never nest), open while len(frames) is
	// at least countedDepth.
	var counted *countedLoop
	countedDepth := 0
	for len(frames) > 0 {
		start := r.pos
		starts = append(starts, start)
		if counted != nil && start == counted.condAt { // the loop's test gets the chunk's bound
			out = append(out, body[copied:start]...)
			out = appendU32(append(out, 0x20), boundTmp) // local.get bound
			if counted.y == nil {
				out = append(out, 0x47) // i32.ne: the loop tested its counter against zero
			} else {
				r.pos += len(counted.y) // instead of the original bound
			}
			copied = r.pos
		}
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		if op == 0x11 && !charge { // a call_indirect in an uncharged function is charged itself (indirectSites)
			out = append(out, body[copied:start]...)
			copied = start
			if local {
				out = rw.fuelLoopLocal(out, fuelTmp)
			} else {
				out = rw.fuelCheck(out, fuelTmp)
			}
			rw.indirectSites++
		}
		switch {
		case op == 0x02 || op == 0x04: // block, if
			if err := r.blockType(); err != nil {
				return nil, err
			}
			frames = append(frames, false)
			open()
		case op == 0x05: // else: the other arm runs without the first
			frameIDs[len(frameIDs)-1], nextID = nextID, nextID+1
		case op == 0x03: // loop: charge every iteration at its header
			btStart := r.pos
			if err := r.blockType(); err != nil {
				return nil, err
			}
			bt := body[btStart:r.pos]
			// Only with the fuel in a local: a function with a loop keeps it there (the pass with the global is
			// done again).
			if c := countedLoopAt(body, r.pos); local && c != nil && counted == nil && bt[0] == 0x40 {
				out = append(out, body[copied:start]...)
				out = rw.countedHead(out, c, fuelTmp, boundTmp)
				frames = append(frames, false) // no branch leaves a counted loop, so none crosses its wrapper
				open()
				counted, countedDepth = c, len(frames)
				copied = r.pos
				rw.loops++
				rw.countedLoops++
				continue
			}
			wrap := len(bt) == 1 // no params: the wrappers can take the loop's result type
			frames = append(frames, wrap)
			open()
			out = append(out, body[copied:start]...)
			if wrap {
				out = rw.loopHead(out, bt[0], local, fuelTmp)
			} else {
				out = append(out, body[start:r.pos]...)
				if local {
					out = rw.fuelLoopLocal(out, fuelTmp)
				} else {
					out = rw.fuelCheck(out, fuelTmp)
				}
			}
			copied = r.pos
			rw.loops++
		case op == 0x0b: // end
			if len(frames) == 1 {
				syncBefore(start) // falling off the end returns
			}
			wrapped := frames[len(frames)-1]
			frames = frames[:len(frames)-1]
			frameIDs = frameIDs[:len(frameIDs)-1]
			if counted != nil && len(frames) < countedDepth {
				out = append(out, body[copied:r.pos]...)
				out = countedTail(out, counted)
				copied = r.pos
				counted = nil
			}
			if wrapped {
				out = append(out, body[copied:r.pos]...)
				out = rw.loopTail(out, local, fuelTmp)
				copied = r.pos
			}
		case op == 0x0f: // return
			if counted != nil { // give back what the chunk charged for iterations that will not run
				out = append(out, body[copied:start]...)
				copied = start
				out = countedRefund(out, counted, fuelTmp, boundTmp)
			}
			syncBefore(start)
		case op == 0x0c || op == 0x0d: // br, br_if: a branch to the function's own label returns
			l, err := r.u32()
			if err != nil {
				return nil, err
			}
			if int(l) == len(frames)-1 {
				syncBefore(start)
			}
			shifted, ok := label(l)
			if !ok {
				return nil, fmt.Errorf("%w: branch label %d out of range", errMalformed, l)
			}
			out = append(out, body[copied:start]...)
			out = appendU32(append(out, op), shifted)
			copied = r.pos
		case op == 0x0e: // br_table
			n, err := r.u32()
			if err != nil {
				return nil, err
			}
			labels := make([]uint32, 0, min(int(n)+1, len(body)))
			exits := false
			for range n + 1 {
				l, err := r.u32()
				if err != nil {
					return nil, err
				}
				exits = exits || int(l) == len(frames)-1
				shifted, ok := label(l)
				if !ok {
					return nil, fmt.Errorf("%w: branch label %d out of range", errMalformed, l)
				}
				labels = append(labels, shifted)
			}
			if exits {
				syncBefore(start)
			}
			out = append(out, body[copied:start]...)
			out = appendU32(append(out, op), n)
			for _, l := range labels {
				out = appendU32(out, l)
			}
			copied = r.pos
		case (op == 0x10 || op == 0x11) && local: // call, call_indirect: the callee charges the global
			if op == 0x10 {
				callee, err := r.u32()
				if err != nil {
					return nil, err
				}
				if i := int64(callee) - int64(rw.imported); i >= 0 && i < int64(len(rw.quiet)) && rw.quiet[i] {
					rw.quietCalls++
					break // the callee never sees the global: the local stays right across the call
				}
				r.pos = start + 1
			}
			syncBefore(start)
			if err := r.skipImmediates(op); err != nil {
				return nil, err
			}
			out = append(out, body[copied:r.pos]...)
			out = rw.reloadFuel(out, fuelTmp)
			copied = r.pos
		case op == 0xfc:
			sub, err := r.u32()
			if err != nil {
				return nil, err
			}
			if isBulkMemory(sub) { // charge the length first, and move a large one in pieces
				out = append(out, body[copied:start]...)
				if local {
					out = rw.bulkChargeLocal(out, stackTmp, fuelTmp)
				} else {
					out = rw.bulkCharge(out, stackTmp, fuelTmp)
				}
				if err := r.skipMiscImmediates(sub); err != nil {
					return nil, err
				}
				out = rw.bulkSplit(out, stackTmp, sub, body[start:r.pos])
				copied = r.pos
				rw.bulkOps++
				continue
			}
			if err := r.skipMiscImmediates(sub); err != nil {
				return nil, err
			}
		case op == 0x41: // i32.const: note a reference to the disabled module's name
			v, err := r.sleb(32)
			if err != nil {
				return nil, err
			}
			if int64(int32(v)) == int64(int32(rw.disabled)) {
				rw.referencesDisabled = true
			}
		case op == 0x40: // memory.grow: tell the host when it fails
			if err := r.zeroByte(); err != nil {
				return nil, err
			}
			out = append(out, body[copied:r.pos]...)
			out = rw.growCheck(out, stackTmp)
			copied = r.pos
			rw.grows++
		case op == 0x24: // global.set
			idx, err := r.u32()
			if err != nil {
				return nil, err
			}
			if idx != rw.spGlobal {
				break
			}
			before := previous(body, starts[:len(starts)-1], 4)
			if l, n, ok := stackRestore(before); ok && writes[l] == 1 {
				if sv, ok := saves[l]; ok && sv.n == n && sv.depth <= len(frameIDs) && frameIDs[sv.depth-1] == sv.frame {
					rw.stackRestores++
					break // left as it is: see stackRestore
				}
			}
			if l, n, ok := stackSaveOf(before); ok && writes[l] == 1 {
				saves[l] = stackSave{n: n, frame: frameIDs[len(frameIDs)-1], depth: len(frameIDs)}
			}
			out = append(out, body[copied:start]...)
			out = rw.stackCheck(out, stackTmp, local, fuelTmp)
			copied = r.pos
			rw.stackWrites++
		default:
			if err := r.skipImmediates(op); err != nil {
				return nil, err
			}
		}
	}
	if err := r.expectEnd(); err != nil {
		return nil, err
	}
	return append(out, body[copied:]...), nil
}

func (r *reader) blockType() error {
	if r.pos >= len(r.b) {
		return fmt.Errorf("%w: truncated block type", errMalformed)
	}
	switch r.b[r.pos] {
	case 0x40, valI32, valI64, valF32, valF64:
		r.pos++
		return nil
	}
	_, err := r.sleb(33) // a type index, for multi-value blocks
	return err
}

// skipImmediates consumes the immediates of every opcode other than the structured ones handled by the caller.
// The accepted set is exactly what the QuickJS build uses: MVP, sign extension, saturating truncation and
// memory.copy and memory.fill. Anything else (SIMD, reference types, tables, atomics, exceptions) is refused, and
// so are memory.init and data.drop: with no instruction that reads or drops a data segment, and none that
// changes a table, an instance's segments and tables are the same after any run, which is what lets a used
// instance be reset to the snapshot by restoring its memory and globals (instance.go).
func (r *reader) skipImmediates(op byte) error {
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b:
		return nil // unreachable, nop, else, return, drop, select
	case op == 0x0c || op == 0x0d: // br, br_if
		_, err := r.u32()
		return err
	case op == 0x0e: // br_table
		n, err := r.u32()
		if err != nil {
			return err
		}
		for range n + 1 {
			if _, err := r.u32(); err != nil {
				return err
			}
		}
		return nil
	case op == 0x10: // call
		_, err := r.u32()
		return err
	case op == 0x11: // call_indirect typeidx tableidx
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	case op >= 0x20 && op <= 0x23: // local.get/set/tee, global.get
		_, err := r.u32()
		return err
	case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	case op == 0x3f || op == 0x40: // memory.size, memory.grow (the rewriter handles memory.grow itself)
		return r.zeroByte()
	case op == 0x41:
		_, err := r.sleb(32)
		return err
	case op == 0x42:
		_, err := r.sleb(64)
		return err
	case op == 0x43:
		_, err := r.bytes(4)
		return err
	case op == 0x44:
		_, err := r.bytes(8)
		return err
	case op >= 0x45 && op <= 0xc4: // numeric, conversions, reinterpret, sign extension
		return nil
	case op == 0xfc:
		sub, err := r.u32()
		if err != nil {
			return err
		}
		return r.skipMiscImmediates(sub)
	}
	return fmt.Errorf("%w: opcode 0x%02x at %d", ErrUnsupportedModule, op, r.pos-1)
}

// skipMiscImmediates consumes the immediates of the 0xfc-prefixed instruction sub, whose sub-opcode was read.
func (r *reader) skipMiscImmediates(sub uint32) error {
	switch {
	case sub <= 7: // saturating truncation
		return nil
	case sub == 10: // memory.copy 0x00 0x00
		if err := r.zeroByte(); err != nil {
			return err
		}
		return r.zeroByte()
	case sub == 11: // memory.fill 0x00
		return r.zeroByte()
	}
	return fmt.Errorf("%w: opcode 0xfc %d at %d", ErrUnsupportedModule, sub, r.pos)
}

func (r *reader) zeroByte() error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c != 0 {
		return fmt.Errorf("%w: expected memory index 0 at %d", ErrUnsupportedModule, r.pos-1)
	}
	return nil
}

// A counted loop is one whose every iteration ends by stepping an i32 local by one and testing it against a bound
// that does not change in the loop:
//
//	loop
//	  ...                                         ;; no other write of x, no write of y
//	  local.get x; i32.const 1; i32.sub (or add); local.tee x; local.get y (or i32.const c); cmp; br_if 0
//	end
//
// with cmp one of i32.gt_s, i32.gt_u, i32.ne counting down, i32.lt_s, i32.lt_u, i32.ne counting up, or no bound
// and no cmp at all (br_if on x: counting to zero). Such a loop's iterations are known when it is entered, so
// instead of one unit at each header it is charged a chunk of up to countedChunk iterations at once: its test
// compares x with the value x has after the chunk's last iteration instead of y, and when a chunk ends while the
// loop's own test would go on, the next chunk is charged and the loop entered again (all its state is in
// locals). The fuel a script uses is unchanged to the unit, and so is where a slice or the budget runs out: a
// chunk is exactly the iterations it charges, never more than the fuel left (but one), and a `return` from
// inside gives back what it charged for the iterations that will not run. Small loops run many times are where
// the header check cost most: musl's fmod, under every `%` of doubles, has 45% of the loop headers of
// wasm.BenchmarkSandboxCPU. Between two charges run at most countedChunk iterations of countedMaxBody bytes
// without a call or an inner loop.
//
// Anything else leaves the loop as loopHead wraps it: a branch out of the loop or back to its header other than
// the final one, a call, an inner loop, a write of the stack pointer, memory.grow, a bulk memory instruction.
const (
	countedChunk   = 1024
	countedMaxBody = 1024
)

type countedLoop struct {
	x      uint32
	y      []byte // the instruction pushing the bound; nil when the loop tests x against zero
	cmp    byte   // the comparison (i32.ne when y is nil)
	down   bool   // x steps by -1
	condAt int    // where the bound was pushed (or, with no bound, the br_if), in the body
}

// loopInsn is an instruction of a loop body as countedLoopAt reads it: imm is a local index or a constant.
type loopInsn struct {
	op    byte
	start int
	imm   int64
}

// countedLoopAt reports whether the loop whose body starts at from in body is a counted loop.
func countedLoopAt(body []byte, from int) *countedLoop {
	var ins []loopInsn
	writes := map[int64]int{}
	continues := 0
	r := &reader{b: body, pos: from}
	for depth := 0; ; {
		if r.pos-from > countedMaxBody {
			return nil
		}
		start := r.pos
		op, err := r.byte()
		if err != nil {
			return nil
		}
		in := loopInsn{op: op, start: start}
		switch {
		case op == 0x02 || op == 0x04:
			if r.blockType() != nil {
				return nil
			}
			depth++
		case op == 0x0b:
			if depth == 0 {
				return countedPattern(ins, writes, continues, body)
			}
			depth--
		case op == 0x0c || op == 0x0d: // a branch out, or back to the header (but the last br_if), disqualifies
			l, err := r.u32()
			if err != nil || int(l) > depth {
				return nil
			}
			if int(l) == depth {
				continues++
			}
		case op == 0x0e:
			n, err := r.u32()
			if err != nil {
				return nil
			}
			for range n + 1 {
				if l, err := r.u32(); err != nil || int(l) >= depth {
					return nil
				}
			}
		case op == 0x03, op == 0x10, op == 0x11, op == 0x40, op == 0x24:
			return nil // an inner loop, a call, memory.grow, a global write (the stack pointer)
		case op == 0xfc:
			sub, err := r.u32()
			if err != nil || isBulkMemory(sub) || r.skipMiscImmediates(sub) != nil {
				return nil
			}
		case op == 0x20 || op == 0x21 || op == 0x22:
			idx, err := r.u32()
			if err != nil {
				return nil
			}
			in.imm = int64(idx)
			if op != 0x20 {
				writes[in.imm]++
			}
		case op == 0x41:
			if in.imm, err = r.sleb(32); err != nil {
				return nil
			}
		default:
			if r.skipImmediates(op) != nil {
				return nil
			}
		}
		ins = append(ins, in)
	}
}

// countedPattern checks the end of a loop body (ins, all its instructions) against the counted pattern; writes
// counts the writes of each local in the body, continues the branches to its header.
func countedPattern(ins []loopInsn, writes map[int64]int, continues int, body []byte) *countedLoop {
	n := len(ins)
	if continues != 1 || n < 5 || ins[n-1].op != 0x0d {
		return nil
	}
	c := &countedLoop{cmp: 0x47, condAt: ins[n-1].start}
	step := ins[:n-1]
	if tail := ins[n-3:]; n >= 7 && (tail[0].op == 0x20 || tail[0].op == 0x41) && tail[1].op >= 0x47 && tail[1].op <= 0x4b {
		c.y, c.cmp, c.condAt = body[tail[0].start:tail[1].start], tail[1].op, tail[0].start
		step = ins[n-7 : n-3]
		if tail[0].op == 0x20 && (writes[tail[0].imm] != 0 || tail[0].imm == step[0].imm) {
			return nil // the bound changes in the loop
		}
	} else {
		step = ins[n-5 : n-1]
	}
	// local.get x; i32.const ±1; i32.add or i32.sub; local.tee x, the only write of x in the loop.
	if step[0].op != 0x20 || step[1].op != 0x41 || step[3].op != 0x22 || step[3].imm != step[0].imm || writes[step[0].imm] != 1 {
		return nil
	}
	switch {
	case step[2].op == 0x6b && step[1].imm == 1, step[2].op == 0x6a && step[1].imm == -1:
		c.down = true
	case step[2].op == 0x6a && step[1].imm == 1, step[2].op == 0x6b && step[1].imm == -1:
	default:
		return nil
	}
	c.x = uint32(step[0].imm)
	switch c.cmp {
	case 0x47: // ne, either way
	case 0x4a, 0x4b: // gt_s, gt_u
		if !c.down {
			return nil
		}
	case 0x48, 0x49: // lt_s, lt_u
		if c.down {
			return nil
		}
	default:
		return nil
	}
	return c
}

// bound pushes the loop's bound: y, or zero.
func (c *countedLoop) bound(b []byte) []byte {
	if c.y == nil {
		return append(b, 0x41, 0x00)
	}
	return append(b, c.y...)
}

// countedHead replaces `loop` (empty type) by a loop that charges the next chunk and then enters the original:
//
//	loop                       ;; next chunk
//	  bound = the chunk's iterations: min(distance to y, countedChunk), at least 1
//	  fuel -= bound; if fuel < 0 { refuel() }
//	  bound = x -/+ bound      ;; the value of x after the chunk's last iteration
//	  loop                     ;; the original loop, testing x against bound instead of y
func (rw *rewriter) countedHead(b []byte, c *countedLoop, fuel, bound uint32) []byte {
	b = append(b, 0x03, 0x40) // loop (next chunk)
	// distance: x - y counting down, y - x counting up (modulo 2^32)
	if c.down {
		b = c.bound(appendU32(append(b, 0x20), c.x))
	} else {
		b = appendU32(append(c.bound(b), 0x20), c.x)
	}
	b = append(b, 0x6b) // i32.sub
	if c.cmp == 0x47 {
		// i32.ne: the loop runs distance iterations (2^32 for 0): chunk = min(distance - 1, K - 1) + 1.
		b = append(b, 0x41, 0x7f, 0x6a)       // i32.const -1; i32.add
		b = appendU32(append(b, 0x22), bound) // local.tee bound
		b = append(b, 0x41)
		b = appendS64(b, countedChunk-1)
		b = appendU32(append(b, 0x20), bound)
		b = append(b, 0x41)
		b = appendS64(b, countedChunk-1)
		b = append(b, 0x49, 0x1b, 0x41, 0x01, 0x6a) // i32.lt_u; select; i32.const 1; i32.add
	} else {
		// An ordered test: distance iterations if the test holds for x now, else one.
		b = appendU32(append(b, 0x22), bound) // local.tee bound
		b = append(b, 0x41)
		b = appendS64(b, countedChunk)
		b = appendU32(append(b, 0x20), bound)
		b = append(b, 0x41)
		b = appendS64(b, countedChunk)
		b = append(b, 0x49, 0x1b, 0x41, 0x01) // i32.lt_u; select (min); i32.const 1
		b = c.bound(appendU32(append(b, 0x20), c.x))
		b = append(b, c.cmp, 0x1b) // cmp; select
	}
	b = appendU32(append(b, 0x21), bound) // local.set bound (the chunk)
	// No more than the fuel left (at least one): a chunk never runs the counter below zero, so the refuel, and a
	// budget's end, come at the very iteration where the header checks had them, whether or not the loop then
	// returns before the chunk's end.
	for range 2 {
		b = appendU32(append(b, 0x20), fuel)  // local.get fuel
		b = appendU32(append(b, 0x20), bound) // local.get bound
		b = append(b, 0xad)                   // i64.extend_i32_u
	}
	b = append(b, 0x54, 0x1b, 0xa7)       // i64.lt_u; select (min); i32.wrap_i64
	b = appendU32(append(b, 0x22), bound) // local.tee bound
	b = appendU32(append(b, 0x20), bound) // local.get bound
	b = append(b, 0x45, 0x72)             // i32.eqz; i32.or: at least one
	b = appendU32(append(b, 0x21), bound) // local.set bound
	b = appendU32(append(b, 0x20), fuel)  // local.get fuel
	b = appendU32(append(b, 0x20), bound) // local.get bound
	b = append(b, 0xad, 0x7d)             // i64.extend_i32_u; i64.sub
	b = appendU32(append(b, 0x22), fuel)  // local.tee fuel
	b = rw.refuelLocal(b, fuel)
	b = appendU32(append(b, 0x20), c.x)   // local.get x
	b = appendU32(append(b, 0x20), bound) // local.get bound
	if c.down {
		b = append(b, 0x6b) // i32.sub
	} else {
		b = append(b, 0x6a) // i32.add
	}
	b = appendU32(append(b, 0x21), bound) // local.set bound
	return append(b, 0x03, 0x40)          // loop (the original)
}

// countedTail follows the original loop's end: when the chunk ended but the loop's own test goes on, the next
// chunk: x; y; cmp; br_if 0; end.
func countedTail(b []byte, c *countedLoop) []byte {
	b = c.bound(appendU32(append(b, 0x20), c.x))
	return append(b, c.cmp, 0x0d, 0x00, 0x0b)
}

// countedRefund goes before a return from inside a counted loop: fuel += the chunk's iterations not yet begun,
// |bound - x| - 1.
func countedRefund(b []byte, c *countedLoop, fuel, bound uint32) []byte {
	b = appendU32(append(b, 0x20), fuel) // local.get fuel
	first, second := c.x, bound
	if !c.down {
		first, second = bound, c.x
	}
	b = appendU32(append(b, 0x20), first)
	b = appendU32(append(b, 0x20), second)
	b = append(b, 0x6b, 0x41, 0x01, 0x6b, 0xad, 0x7c) // i32.sub; i32.const 1; i32.sub; i64.extend_i32_u; i64.add
	return appendU32(append(b, 0x21), fuel)           // local.set fuel
}

// A function's epilogue (in clang's output) gives its frame back by writing the stack pointer its prologue
// lowered, plus the same constant:
//
//	global.get sp; i32.const n; i32.sub; local.tee l; global.set sp   ;; prologue, guarded
//	...
//	local.get l; i32.const n; i32.add; global.set sp                  ;; epilogue
//
// The epilogue is left unguarded when l has no other write in the function and the prologue runs before it on
// every path (it sits earlier in a structure still open there). Why that cannot let the stack below the mark:
// the value written is (sp0 - n) + n = sp0 modulo 2^32, sp0 being what the stack pointer held when the prologue
// read it; and every value the stack pointer ever holds is at or above the mark, by induction: the host sets it
// (to the snapshot's) with no guest frame running, every other write is guarded, and this one writes a value it
// held before. The mark itself changes only with no guest frame running (snapshot, reset) or to zero at the
// guard's trap, after which the run is over. About half the stack pointer's writes are such epilogues, and each
// one's guard cost a load, a compare and a branch on every return.
type stackSave struct {
	n            int64 // the constant the prologue subtracted
	frame, depth int   // the structure the prologue sits in (frameIDs)
}

// stackSaveOf matches a prologue's guarded write: before is the four instructions before the global.set.
func stackSaveOf(before []loopInsn) (local uint32, n int64, ok bool) {
	if len(before) != 4 || before[0].op != 0x23 || before[0].imm != 0 || before[1].op != 0x41 || before[2].op != 0x6b || before[3].op != 0x22 {
		return 0, 0, false
	}
	return uint32(before[3].imm), before[1].imm, true
}

// stackRestore matches an epilogue's write: the last three of before are local.get l; i32.const n; i32.add.
func stackRestore(before []loopInsn) (local uint32, n int64, ok bool) {
	if len(before) < 3 {
		return 0, 0, false
	}
	b := before[len(before)-3:]
	if b[0].op != 0x20 || b[1].op != 0x41 || b[2].op != 0x6a {
		return 0, 0, false
	}
	return uint32(b[0].imm), b[1].imm, true
}

// previous decodes the last k instructions of body that start at starts (global.get, local.* and i32.const with
// their immediate; others by opcode only).
func previous(body []byte, starts []int, k int) []loopInsn {
	if len(starts) < k {
		k = len(starts)
	}
	out := make([]loopInsn, 0, k)
	for _, at := range starts[len(starts)-k:] {
		r := &reader{b: body, pos: at}
		op, err := r.byte()
		if err != nil {
			return nil
		}
		in := loopInsn{op: op, start: at}
		switch {
		case op >= 0x20 && op <= 0x23:
			v, err := r.u32()
			if err != nil {
				return nil
			}
			in.imm = int64(v)
		case op == 0x41:
			if in.imm, err = r.sleb(32); err != nil {
				return nil
			}
		}
		out = append(out, in)
	}
	return out
}

// localWrites counts the local.set and local.tee of each local in the function body whose instructions start at
// from; nil if the body does not decode (the walker then reports why).
func localWrites(body []byte, from int) map[uint32]int {
	writes := map[uint32]int{}
	r := &reader{b: body, pos: from}
	for !r.done() {
		op, err := r.byte()
		if err != nil {
			return nil
		}
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04:
			err = r.blockType()
		case op == 0x21 || op == 0x22:
			var idx uint32
			idx, err = r.u32()
			writes[idx]++
		case op == 0x24: // global.set, which skipImmediates leaves to the walker
			_, err = r.u32()
		case op == 0x0b:
		default:
			err = r.skipImmediates(op)
		}
		if err != nil {
			return nil
		}
	}
	return writes
}

// callFacts is what the call analysis (unchargedFuncs) reads of one function body.
type callFacts struct {
	loops    bool     // a loop: charged at its header, and the function keeps its fuel in a local
	indirect bool     // a call_indirect, whose callee the analysis does not resolve
	callees  []uint32 // direct calls, by function index
	fuel     bool     // an instruction whose rewrite reads or writes the fuel global or calls the host: a bulk
	// memory instruction (charged by its length), memory.grow (its refusal calls the host) or a write of the stack
	// pointer (whose guard writes the fuel back before it traps)
}

// scanCalls reads the facts of the function body whose instructions start at from.
func scanCalls(body []byte, from int) (callFacts, error) {
	var f callFacts
	r := &reader{b: body, pos: from}
	for !r.done() {
		op, err := r.byte()
		if err != nil {
			return f, err
		}
		switch {
		case op == 0x02 || op == 0x04:
			err = r.blockType()
		case op == 0x03:
			f.loops = true
			err = r.blockType()
		case op == 0x0b:
		case op == 0x10:
			var callee uint32
			callee, err = r.u32()
			f.callees = append(f.callees, callee)
		case op == 0x11:
			f.indirect = true
			err = r.skipImmediates(op)
		case op == 0x24: // global.set, which skipImmediates leaves to the walker: only the stack pointer is mutable
			_, err = r.u32()
			f.fuel = true
		case op == 0x40:
			f.fuel = true
			err = r.zeroByte()
		case op == 0xfc:
			var sub uint32
			if sub, err = r.u32(); err == nil {
				f.fuel = f.fuel || isBulkMemory(sub)
				err = r.skipMiscImmediates(sub)
			}
		default:
			err = r.skipImmediates(op)
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// unchargedFuncs decides which defined functions go without the fuel charge at entry (uncharged), and which of
// those a caller with its fuel in a local may call without writing the local back and reloading it (quiet).
// An uncharged function's call_indirects are charged themselves (indirectSites).
//
// An entry charge is only needed to stop calls that never end, and an endless run of calls without an endless
// loop has an endless chain of nested calls (each body makes finitely many calls between loop headers), which in
// a finite module goes round a cycle of the call graph. So every cycle must pass a charge, and no more is needed:
// a cycle through a function pointer passes its call_indirect, charged where it calls (or at the entry of its
// function, when that is charged); a cycle through the host leaves from a function calling an import, charged;
// and a cycle of direct calls among the other functions passes one of the functions chosen to break them (a
// feedback vertex set, chosen greedily: in each strongly connected component holding a cycle, the function with
// the most calls for the calls made to it, a dispatcher rather than a helper, then the components are found
// again without it). Every other function, loops or not, is uncharged: its loops are charged at their headers as
// before, and a script is stopped when its fuel runs out as before; only the units counted differ.
//
// A quiet function has no loop, no call_indirect, no call of an import and no instruction touching the fuel
// global or the host (callFacts.fuel), and calls only quiet functions: the least fixed point, so none is on a
// cycle, and none is charged.
func unchargedFuncs(facts []callFacts, imported int) (uncharged, quiet []bool) {
	n := len(facts)
	uncharged, quiet = make([]bool, n), make([]bool, n)
	defined := func(c uint32) (int, bool) {
		i := int(c) - imported
		return i, i >= 0 && i < n
	}
	for changed := true; changed; {
		changed = false
		for i, f := range facts {
			if quiet[i] || f.loops || f.indirect || f.fuel {
				continue
			}
			all := true
			for _, c := range f.callees {
				if j, ok := defined(c); !ok || !quiet[j] {
					all = false
					break
				}
			}
			if all {
				quiet[i], changed = true, true
			}
		}
	}
	// Functions calling an import are charged; the cycles left are looked for without them (edges into a
	// charged function are left out).
	charged := make([]bool, n)
	for i, f := range facts {
		for _, c := range f.callees {
			if _, ok := defined(c); !ok {
				charged[i] = true // the host may call back in
			}
		}
	}
	// Breaking the cycles: while some are left, one function of each strongly connected component is charged,
	// the one making the most calls for the calls it receives (a dispatcher rather than a helper, which is
	// entered far less often), and the components are found again without it.
	calledAt := make([]int, n)
	for _, f := range facts {
		for _, c := range f.callees {
			if j, ok := defined(c); ok {
				calledAt[j]++
			}
		}
	}
	for {
		rest := make([][]uint32, n)
		for i, f := range facts {
			if charged[i] {
				continue
			}
			for _, c := range f.callees {
				if j, _ := defined(c); !charged[j] {
					rest[i] = append(rest[i], uint32(j))
				}
			}
		}
		comp := components(rest)
		best := map[int]int{} // component -> the function to charge
		for i, c := range comp {
			if c < 0 {
				continue
			}
			b, ok := best[c]
			if !ok || len(facts[i].callees)*(1+calledAt[b]) > len(facts[b].callees)*(1+calledAt[i]) {
				best[c] = i
			}
		}
		if len(best) == 0 {
			break
		}
		for _, i := range best {
			charged[i] = true
		}
	}
	for i := range facts {
		uncharged[i] = !charged[i]
	}
	return uncharged, quiet
}

// components numbers the strongly connected components of the graph (callees[i]: the nodes i calls) that hold
// a cycle (more than one node, or one calling itself), -1 for a node on no cycle: Tarjan's algorithm, without
// recursion.
func components(callees [][]uint32) []int {
	n := len(callees)
	index, low := make([]int, n), make([]int, n)
	onStack, self := make([]bool, n), make([]bool, n)
	comp := make([]int, n)
	comps := 0
	for i := range index {
		index[i] = -1
	}
	next := 0
	var stack []int
	type frame struct{ v, edge int }
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		work := []frame{{v: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			top := &work[len(work)-1]
			v := top.v
			if top.edge < len(callees[v]) {
				w := int(callees[v][top.edge])
				top.edge++
				if w == v {
					self[v] = true
				}
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, frame{v: w})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			work = work[:len(work)-1]
			if len(work) > 0 {
				parent := work[len(work)-1].v
				low[parent] = min(low[parent], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			k := len(stack) - 1
			for stack[k] != v {
				k--
			}
			id := -1
			if len(stack)-k > 1 || self[v] {
				id, comps = comps, comps+1
			}
			for _, w := range stack[k:] {
				comp[w] = id
			}
			for _, w := range stack[k:] {
				onStack[w] = false
			}
			stack = stack[:k]
		}
	}
	return comp
}

// codeBodies splits the code section's count bodies (rest follows the count), which must fill it.
func codeBodies(rest []byte, count uint32) ([][]byte, error) {
	r := &reader{b: rest}
	bodies := make([][]byte, 0, r.capacity(count))
	for range count {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		body, err := r.bytes(int(size))
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, body)
	}
	if err := r.expectEnd(); err != nil {
		return nil, err
	}
	return bodies, nil
}

// scanBodies reads the callFacts of every function body.
func scanBodies(bodies [][]byte) ([]callFacts, error) {
	facts := make([]callFacts, 0, len(bodies))
	for _, body := range bodies {
		br := &reader{b: body}
		groups, err := br.u32()
		if err != nil {
			return nil, err
		}
		if _, err := br.localGroups(groups); err != nil {
			return nil, err
		}
		f, err := scanCalls(body, br.pos)
		if err != nil {
			return nil, err
		}
		facts = append(facts, f)
	}
	return facts, nil
}
