package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

func TestEmbeddedModuleIsPinned(t *testing.T) {
	sum := sha256.Sum256(quickJSModule)
	assert.Equal(t, QuickJSModuleSHA256, hex.EncodeToString(sum[:]),
		"the QuickJS module changed: check its imports, exports and opcodes against docs/sandbox.md and re-run every wasm test before moving the pin")
	assert.Equal(t, 1_038_767, len(quickJSModule))
}

func TestDecodeEncodeRoundTripIsIdentical(t *testing.T) {
	m, err := decodeModule(quickJSModule)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(quickJSModule, m.encode()), "an untouched module must re-encode byte for byte")
}

func TestInstrumentReachesEverySite(t *testing.T) {
	out, stats, err := instrument(quickJSModule)
	require.NoError(t, err)
	// Counts from the module itself (wasm-objdump): 1,138 defined functions, 1,726 loops, and every write of
	// __stack_pointer. If a future walker skipped some, fuel or the stack guard would have holes.
	assert.Equal(t, 1138, stats.functions)
	assert.Equal(t, 1726, stats.loops)
	assert.Equal(t, 3, stats.bulkOps, "memcpy and memmove (memory.copy), memset (memory.fill)")
	assert.Equal(t, 1, stats.grows, "sbrk's memory.grow")
	assert.Equal(t, 1021, stats.stackWrites+stats.stackRestores, "every write of the stack pointer")
	assert.Equal(t, 415, stats.stackRestores, "epilogues restoring what a guarded prologue lowered (stackRestore)")
	assert.Equal(t, 1162, stats.originalFuncs)

	m, err := decodeModule(out)
	require.NoError(t, err)
	for _, s := range m.sections {
		if s.id == sectionCustom {
			assert.False(t, isDebugSection(s.payload), "stale DWARF must be dropped")
		}
	}

	// wazero validates the rewritten module fully when it compiles it.
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	_, err = r.CompileModule(ctx, out)
	require.NoError(t, err)
}

func TestInstrumentIsDeterministic(t *testing.T) {
	a, _, err := instrument(quickJSModule)
	require.NoError(t, err)
	b, _, err := instrument(quickJSModule)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b))
}

// tinyModule builds a module with what the instrumenter needs around one function body (function 1): the proxy
// import, the stack pointer global, and, as in the QuickJS build, the qjs:bjson module name with a function
// registering it (function 2, which the rewrite empties) and the start-up script lines importing it.
func tinyModule(body []byte) []byte {
	return tinyModuleOf([]tinyFunc{{typ: tinyVoid, body: body}}, nil)
}

// Types of a tinyModuleOf: the proxy import's, [] -> [] and [i32] -> [].
const (
	tinyVoid = 1
	tinyI32  = 2
)

type tinyFunc struct {
	typ  uint32
	body []byte
}

// tinyModuleOf is tinyModule with the functions funcs (1 to len(funcs); f is function 1, and the registering
// function comes after them) and, when table is not empty, a table holding the function indices table for
// call_indirect.
func tinyModuleOf(funcs []tinyFunc, table []uint32) []byte {
	var m module
	types := []funcType{{params: []byte{valI32, valI64, valI32, valI32}, results: []byte{valI64}}, {}, {params: []byte{valI32}}}
	m.sections = append(m.sections, section{id: sectionType, payload: encodeVector(types, func(b []byte, t funcType) []byte { return t.encode(b) })})
	imp := appendU32(nil, 1)
	imp = appendName(imp, "env")
	imp = appendName(imp, "jsFunctionProxy")
	imp = append(imp, externFunc, 0)
	m.sections = append(m.sections, section{id: sectionImport, payload: imp})
	fs := appendU32(nil, uint32(len(funcs)+1))
	for _, f := range funcs {
		fs = appendU32(fs, f.typ)
	}
	m.sections = append(m.sections, section{id: sectionFunction, payload: appendU32(fs, tinyVoid)})
	if len(table) > 0 {
		n := uint32(len(table))
		m.sections = append(m.sections, section{id: 4, payload: appendU32(appendU32([]byte{1, 0x70, 0x01}, n), n)}) // funcref, min = max
	}
	m.sections = append(m.sections, section{id: sectionMemory, payload: []byte{1, 0, 1}})
	m.sections = append(m.sections, section{id: sectionGlobal, payload: []byte{1, valI32, 1, 0x41, 0x80, 0x80, 0x04, 0x0b}})
	exp := appendU32(nil, 1)
	exp = encodeExport(exp, exportEntry{name: "f", kind: externFunc, index: 1})
	m.sections = append(m.sections, section{id: sectionExport, payload: exp})
	if len(table) > 0 {
		elem := appendU32([]byte{1, 0x00, 0x41, 0x00, 0x0b}, uint32(len(table))) // active at i32.const 0
		for _, idx := range table {
			elem = appendU32(elem, idx)
		}
		m.sections = append(m.sections, section{id: 9, payload: elem})
	}
	register := []byte{0x00, 0x41, 0x80, 0x08, 0x1a, 0x0b} // no locals; drop(i32.const 1024); end
	code := appendU32(nil, uint32(len(funcs)+1))
	for _, f := range append(funcs, tinyFunc{body: register}) {
		code = appendU32(code, uint32(len(f.body)))
		code = append(code, f.body...)
	}
	m.sections = append(m.sections, section{id: sectionCode, payload: code})
	data := []byte(disabledModule + "\x00" + strings.Join(disabledImports, ""))
	seg := appendU32(nil, 1)
	seg = append(seg, 0x00, 0x41, 0x80, 0x08, 0x0b) // active at i32.const 1024
	seg = appendU32(seg, uint32(len(data)))
	m.sections = append(m.sections, section{id: sectionData, payload: append(seg, data...)})
	return m.encode()
}

func TestInstrumentTinyModule(t *testing.T) {
	// no locals; loop: global.get 0; i32.const 16; i32.sub; global.set 0; end; end
	body := []byte{0x00, 0x03, 0x40, 0x23, 0x00, 0x41, 0x10, 0x6b, 0x24, 0x00, 0x0b, 0x0b}
	out, stats, err := instrument(tinyModule(body))
	require.NoError(t, err)
	assert.Equal(t, instrumentStats{functions: 2, loops: 1, stackWrites: 1, disabled: 1, localFuel: 1, originalFuncs: 3}, stats)

	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	_, err = r.CompileModule(ctx, out)
	require.NoError(t, err, "the rewritten tiny module must validate")
}

// Bulk memory instructions are charged by their length and memory.grow is checked; the result validates.
func TestInstrumentBulkMemoryAndGrow(t *testing.T) {
	body := []byte{0x00,
		0x41, 0x00, 0x41, 0x00, 0x41, 0x08, 0xfc, 0x0a, 0x00, 0x00, // memory.copy(0, 0, 8)
		0x41, 0x00, 0x41, 0x01, 0x41, 0x08, 0xfc, 0x0b, 0x00, // memory.fill(0, 1, 8)
		0x41, 0x01, 0x40, 0x00, 0x1a, // drop(memory.grow(1))
		0x0b}
	out, stats, err := instrument(tinyModule(body))
	require.NoError(t, err)
	assert.Equal(t, instrumentStats{functions: 2, bulkOps: 2, grows: 1, disabled: 1, originalFuncs: 3}, stats)
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	_, err = r.CompileModule(ctx, out)
	require.NoError(t, err, "the rewritten module must validate")
}

func TestInstrumentRejectsWhatItDoesNotKnow(t *testing.T) {
	for name, body := range map[string][]byte{
		"simd v128.const":  {0x00, 0xfd, 0x0c, 0x0b},
		"table.get":        {0x00, 0x41, 0x00, 0x25, 0x00, 0x1a, 0x0b},
		"table.grow (fc)":  {0x00, 0xfc, 0x0f, 0x00, 0x0b},
		"table.set":        {0x00, 0x41, 0x00, 0xd2, 0x00, 0x26, 0x00, 0x0b},
		"table.init":       {0x00, 0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0c, 0x00, 0x00, 0x0b},
		"elem.drop":        {0x00, 0xfc, 0x0d, 0x00, 0x0b},
		"table.copy":       {0x00, 0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x0e, 0x00, 0x00, 0x0b},
		"table.fill":       {0x00, 0x41, 0x00, 0xd0, 0x70, 0x41, 0x00, 0xfc, 0x11, 0x00, 0x0b},
		"memory.init":      {0x00, 0x41, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfc, 0x08, 0x00, 0x00, 0x0b},
		"data.drop":        {0x00, 0xfc, 0x09, 0x00, 0x0b},
		"ref.null":         {0x00, 0xd0, 0x70, 0x1a, 0x0b},
		"atomics prefix":   {0x00, 0xfe, 0x00, 0x0b},
		"memory index one": {0x00, 0x3f, 0x01, 0x1a, 0x0b},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := instrument(tinyModule(body))
			require.ErrorIs(t, err, ErrUnsupportedModule)
		})
	}
}

func TestInstrumentRejectsMalformedInput(t *testing.T) {
	for name, input := range map[string][]byte{
		"empty":            nil,
		"bad magic":        []byte("\x00asn\x01\x00\x00\x00"),
		"truncated body":   tinyModule([]byte{0x00, 0x03, 0x40, 0x0b}),
		"section too long": append([]byte(wasmHeader), 0x01, 0xff, 0x01),
		"leb too long":     append([]byte(wasmHeader), 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f),
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := instrument(input)
			require.Error(t, err)
			assert.True(t, errors.Is(err, errMalformed) || errors.Is(err, ErrUnsupportedModule), err)
		})
	}
}

func FuzzInstrument(f *testing.F) {
	f.Add(tinyModule([]byte{0x00, 0x03, 0x40, 0x23, 0x00, 0x41, 0x10, 0x6b, 0x24, 0x00, 0x0b, 0x0b}))
	f.Add(tinyModule([]byte{0x00, 0x0b}))
	f.Add(quickJSModule[:4096])
	f.Fuzz(func(t *testing.T, input []byte) {
		out, _, err := instrument(input)
		if err != nil {
			return
		}
		// Whatever the walker accepts it must be able to walk again: the output is itself well formed.
		_, _, err = instrument(out)
		if err != nil && !errors.Is(err, ErrUnsupportedModule) {
			t.Fatalf("instrumented output does not decode: %v", err)
		}
	})
}

// A vector count far beyond the section's bytes must fail as malformed, not allocate for the claimed count.
func TestHugeVectorCountsAreRefused(t *testing.T) {
	payload := appendU32(nil, 0x7fffffff)
	for name, decode := range map[string]func([]byte) error{
		"types":   func(b []byte) error { _, err := decodeTypes(b); return err },
		"imports": func(b []byte) error { _, err := decodeImports(b); return err },
		"exports": func(b []byte) error { _, err := decodeExports(b); return err },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := decode(payload)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, errMalformed, name)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%s: allocated for the claimed count", name)
	}
}

// The data section of the real module, the seed of FuzzDataAddresses.
func quickJSDataSection(tb testing.TB) []byte {
	m, err := decodeModule(quickJSModule)
	require.NoError(tb, err)
	s := m.section(sectionData)
	require.NotNil(tb, s)
	return s.payload
}

func TestDataAddresses(t *testing.T) {
	got, err := dataAddresses(quickJSDataSection(t), []byte("qjs:bjson\x00"))
	require.NoError(t, err)
	assert.Equal(t, []uint32{8860}, got, "where the module keeps the name (the one function loading this address registers the module)")
	got, err = dataAddresses(quickJSDataSection(t), []byte("no such text anywhere"))
	require.NoError(t, err)
	assert.Empty(t, got)
}

// FuzzDataAddresses: whatever the data section, finding text in it never panics, never allocates for a count the
// bytes cannot hold, and every address it returns does hold the text.
func FuzzDataAddresses(f *testing.F) {
	f.Add(quickJSDataSection(f), []byte("qjs:bjson\x00"))
	f.Add(quickJSDataSection(f)[:512], []byte("out of memory"))
	seg := appendU32(nil, 2)
	seg = append(seg, 0x00, 0x41, 0x80, 0x08, 0x0b, 3, 'a', 'b', 'a', 0x01, 2, 'a', 'b')
	f.Add(seg, []byte("a"))
	f.Fuzz(func(t *testing.T, payload, needle []byte) {
		if len(needle) == 0 {
			return
		}
		got, err := dataAddresses(payload, needle)
		if err != nil {
			return
		}
		// The active segments as an instance would place them (they cannot overlap: that is refused).
		type segment struct {
			at   uint32
			data []byte
		}
		var segs []segment
		count, rest, _ := vectorItems(payload)
		r := &reader{b: rest}
		for range count {
			flags, _ := r.u32()
			var offset int64
			if flags == 0 {
				r.byte()
				offset, _ = r.sleb(32)
				r.byte()
			}
			n, _ := r.u32()
			data, _ := r.bytes(int(n))
			if flags == 0 {
				segs = append(segs, segment{uint32(offset), data})
			}
		}
		for _, at := range got {
			found := false
			for _, s := range segs {
				if at >= s.at && uint64(at-s.at)+uint64(len(needle)) <= uint64(len(s.data)) &&
					bytes.Equal(s.data[at-s.at:int(at-s.at)+len(needle)], needle) {
					found = true
				}
			}
			if !found {
				t.Fatalf("address %d does not hold %q", at, needle)
			}
		}
	})
}

// FuzzSLEB: the signed LEB128 reader reads back exactly what the writer wrote, and never reads past its bits.
func FuzzSLEB(f *testing.F) {
	for _, v := range []int64{0, 1, -1, 63, 64, -64, -65, 8860, 1 << 31, -1 << 31, 1<<63 - 1, -1 << 63} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		b := appendS64(nil, v)
		r := &reader{b: b}
		got, err := r.sleb(64)
		if err != nil || got != v || !r.done() {
			t.Fatalf("sleb(appendS64(%d)) = %d, %v (read %d of %d bytes)", v, got, err, r.pos, len(b))
		}
		if v >= -1<<31 && v < 1<<31 {
			r = &reader{b: b}
			if got, err := r.sleb(32); err != nil || got != v {
				t.Fatalf("sleb32(%d) = %d, %v", v, got, err)
			}
		}
	})
}

// A function whose loops are wrapped for the out-of-loop refuel, with branches that cross the wrappers (br_if to
// a block outside, br_table to the enclosing loop, br_if to the function's own label) and a loop with a result:
// instrumented, it computes what the original does, and charges exactly one unit per loop iteration however
// small the fuel slices are (a slice of 1 takes the refuel path at nearly every header). Its entry is not
// charged: it calls nothing, so it is on no cycle of calls (unchargedFuncs).
func TestInstrumentedLoopsComputeTheSameAndChargeExactly(t *testing.T) {
	body := []byte{0x01, 0x02, valI32, // locals i, j
		0x02, 0x40, // block B0
		0x03, 0x40, // loop L1
		0x20, 0x00, 0x41, 0x0a, 0x4f, 0x0d, 0x01, // br_if B0 (i >= 10)
		0x20, 0x00, 0x41, 0x0c, 0x46, 0x0d, 0x02, // br_if to the function (i == 12, never)
		0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00, // i++
		0x41, 0x00, 0x21, 0x01, // j = 0
		0x03, 0x40, // loop L3
		0x41, 0x00, 0x41, 0x00, 0x28, 0x02, 0x00, 0x41, 0x01, 0x6a, 0x36, 0x02, 0x00, // mem[0]++
		0x20, 0x01, 0x41, 0x01, 0x6a, 0x22, 0x01, 0x41, 0x04, 0x4f, // j = j + 1; j >= 4
		0x0e, 0x01, 0x00, 0x01, // br_table [L3] default L1
		0x0b,                                 // end L3
		0x0b,                                 // end L1
		0x0b,                                 // end B0
		0x03, valI32, 0x41, 0x07, 0x0b, 0x1a, // drop(loop (result i32) i32.const 7 end)
		0x0b}
	const wantCount, wantFuel = 40, 11 + 40 + 1 // L1 headers, L3 headers, the result loop

	original := tinyModule(body)
	instrumented, stats, err := instrument(original)
	require.NoError(t, err)
	require.Equal(t, 3, stats.loops)
	require.Equal(t, 1, stats.localFuel)

	requireSameCountExactFuel(t, original, instrumented, wantCount, wantFuel, 1, 2, 3, 7, 1000)
}

// A reset sets the globals the host knows; a module with another mutable global is refused rather than reused
// with a value left by the last run.
func TestInstrumentRefusesOtherMutableGlobals(t *testing.T) {
	require.NoError(t, onlyStackPointerMutable(1, []byte{valI32, 1, 0x41, 0x10, 0x0b}))
	require.NoError(t, onlyStackPointerMutable(2, []byte{valI32, 1, 0x41, 0x10, 0x0b, valI64, 0, 0x42, 0x01, 0x0b}), "an immutable one is fine")
	err := onlyStackPointerMutable(2, []byte{valI32, 1, 0x41, 0x10, 0x0b, valI32, 1, 0x41, 0x00, 0x0b})
	require.ErrorIs(t, err, ErrUnsupportedModule)
	m := tinyModule([]byte{0x00, 0x0b})
	mod, err := decodeModule(m)
	require.NoError(t, err)
	mod.section(sectionGlobal).payload = []byte{2, valI32, 1, 0x41, 0x10, 0x0b, valF64, 1, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b}
	_, _, err = instrument(mod.encode())
	require.ErrorIs(t, err, ErrUnsupportedModule)
	_, _, err = instrument(quickJSModule)
	require.NoError(t, err, "the real module has only the stack pointer")
}

// Counted loops (countedLoopAt) are charged a chunk of iterations at a time: counting down against a local, up
// against a constant past one chunk, down to zero, up to an inequality, and down with a return from inside.
// Instrumented, the function computes what the original does and is charged exactly one unit per iteration (its
// entry, on no cycle of calls, is not charged), however small the fuel slices (a slice of 1 makes every chunk a
// single iteration). A loop that branches out is left to the header check.
func TestCountedLoopsComputeTheSameAndChargeExactly(t *testing.T) {
	inc := []byte{0x41, 0x00, 0x41, 0x00, 0x28, 0x02, 0x00, 0x41, 0x01, 0x6a, 0x36, 0x02, 0x00} // mem[0]++
	loop := func(init []byte, tail ...byte) []byte {
		b := append(append([]byte{}, init...), 0x21, 0x00, 0x03, 0x40) // x = init; loop
		b = append(b, inc...)
		return append(append(b, tail...), 0x0b)
	}
	body := []byte{0x01, 0x02, valI32}                                                                              // locals x, y
	body = append(body, 0x41, 0x05, 0x21, 0x01)                                                                     // y = 5
	body = append(body, loop([]byte{0x41, 20}, 0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x20, 1, 0x4a, 0x0d, 0)...)         // 20 > 5, gt_s y: 15
	body = append(body, loop([]byte{0x41, 0}, 0x20, 0, 0x41, 1, 0x6a, 0x22, 0, 0x41, 0xb8, 0x17, 0x49, 0x0d, 0)...) // lt_u 3000: 3000
	body = append(body, loop([]byte{0x41, 0xc4, 0x13}, 0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x0d, 0)...)                // 2500 to zero
	body = append(body, loop([]byte{0x41, 0}, 0x20, 0, 0x41, 0x7f, 0x6b, 0x22, 0, 0x41, 7, 0x47, 0x0d, 0)...)       // x - -1 != 7: 7
	body = append(body, 0x02, 0x40)                                                                                 // block
	body = append(body, loop([]byte{0x41, 3}, 0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x45, 0x0d, 1, 0x0c, 0)...)          // breaks out: 3
	body = append(body, 0x0b)                                                                                       // end block
	body = append(body, loop([]byte{0x41, 0xe4, 0x00}, 0x20, 0, 0x41, 40, 0x46, 0x04, 0x40, 0x0f, 0x0b,             // return at 40
		0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x41, 0, 0x4a, 0x0d, 0)...) // 100 down, gt_s 0: 61
	body = append(body, 0x0b)
	const wantCount = 15 + 3000 + 2500 + 7 + 3 + 61
	const wantFuel = wantCount

	original := tinyModule(body)
	instrumented, stats, err := instrument(original)
	require.NoError(t, err)
	require.Equal(t, 6, stats.loops)
	require.Equal(t, 5, stats.countedLoops, "all but the loop that breaks out")

	requireSameCountExactFuel(t, original, instrumented, wantCount, wantFuel,
		1, 2, 3, 7, 1000, 1023, 1024, 1025, wantFuel-1, wantFuel, 1<<16)
}

// requireSameCountExactFuel runs the original tinyModule once and the instrumented one with fuel handed out in
// each of slices: the instrumented module must compute what the original does (wantCount in mem[0]) and use
// exactly wantFuel units, however the fuel is sliced.
func requireSameCountExactFuel(t *testing.T, original, instrumented []byte, wantCount uint32, wantFuel int64, slices ...int64) {
	t.Helper()
	count, _ := runTiny(t, original, 0)
	require.EqualValues(t, wantCount, count, "the original module")
	for _, slice := range slices {
		count, fuel := runTiny(t, instrumented, slice)
		assert.EqualValues(t, wantCount, count, "slice %d", slice)
		assert.EqualValues(t, wantFuel, fuel, "slice %d", slice)
	}
}

// runTiny instantiates a tinyModule, runs its function f with fuel handed out in slices of slice units, and
// returns mem[0] and the fuel it used. Every refuel must come one unit past the slice, as the header checks have it.
func runTiny(t *testing.T, wasmBytes []byte, slice int64) (count uint32, fuel int64) {
	count, fuel, err := runTinyBudget(t, wasmBytes, slice, -1)
	require.NoError(t, err)
	return count, fuel
}

// errTinyBudget is what runTinyBudget's host returns when the budget is spent.
var errTinyBudget = errors.New("tiny budget spent")

// runTinyBudget is runTiny stopping the run, as the engine does, at the first refuel once budget units (if not
// negative) are used: f then fails with errTinyBudget.
func runTinyBudget(t *testing.T, wasmBytes []byte, slice, budget int64) (count uint32, fuel int64, err error) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	var granted int64
	var fuelGlobal api.MutableGlobal
	_, err = r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			require.EqualValues(t, hookFuel, int32(uint32(stack[2])))
			// Where a slice runs out is where one unit at each header has it: a unit past the end, never more.
			require.EqualValues(t, -1, int64(fuelGlobal.Get()), "a charge ran past the slice")
			used := granted - int64(fuelGlobal.Get())
			if budget >= 0 && used > budget {
				panic(errTinyBudget)
			}
			granted = used + slice
			fuelGlobal.Set(uint64(slice))
			stack[0] = 0
		}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}).
		Export("jsFunctionProxy").Instantiate(ctx)
	require.NoError(t, err)
	mod, err := r.InstantiateWithConfig(ctx, wasmBytes, wazero.NewModuleConfig().WithStartFunctions())
	require.NoError(t, err)
	if g := mod.ExportedGlobal(exportFuel); g != nil {
		fuelGlobal = g.(api.MutableGlobal)
	}
	_, err = mod.ExportedFunction("f").Call(ctx)
	count, _ = mod.Memory().ReadUint32Le(0)
	if fuelGlobal != nil {
		fuel = granted - int64(fuelGlobal.Get())
	}
	return count, fuel, err
}

// An epilogue that gives back what a guarded prologue took is left unguarded (stackRestore), and nothing else
// is: not a write lowering the stack pointer, not a restore the prologue may not have run before, not one with
// another constant or a local written twice. Run, a write below the mark still traps and zeroes it.
func TestStackRestoreOnlyWhereProven(t *testing.T) {
	prologue := []byte{0x23, 0x00, 0x41, 0x10, 0x6b, 0x22, 0x00, 0x24, 0x00} // sp = l = sp - 16
	restore := []byte{0x20, 0x00, 0x41, 0x10, 0x6a, 0x24, 0x00}              // sp = l + 16
	cat := func(parts ...[]byte) []byte {
		b := []byte{0x01, 0x01, valI32} // local l
		for _, p := range parts {
			b = append(b, p...)
		}
		return append(b, 0x0b)
	}
	for _, tc := range []struct {
		name              string
		body              []byte
		guarded, restored int
	}{
		{"epilogue", cat(prologue, restore), 1, 1},
		{"epilogue in a block after it", cat(prologue, []byte{0x02, 0x40}, restore, []byte{0x0b}), 1, 1},
		{"lowering", cat(prologue, []byte{0x20, 0x00, 0x41, 0x10, 0x6b, 0x24, 0x00}), 2, 0},
		{"another constant", cat(prologue, []byte{0x20, 0x00, 0x41, 0x20, 0x6a, 0x24, 0x00}), 2, 0},
		{"local written twice", cat(prologue, []byte{0x41, 0x00, 0x21, 0x00}, restore), 2, 0},
		{"prologue in an if, restore after it", cat([]byte{0x41, 0x01, 0x04, 0x40}, prologue, []byte{0x0b}, restore), 2, 0},
		{"prologue in then, restore in else", cat([]byte{0x41, 0x01, 0x04, 0x40}, prologue, []byte{0x05}, restore, []byte{0x0b}), 2, 0},
		{"restore before the prologue", cat([]byte{0x41, 0x01, 0x04, 0x40}, restore, []byte{0x0b}, prologue), 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stats, err := instrument(tinyModule(tc.body))
			require.NoError(t, err)
			assert.Equal(t, tc.guarded, stats.stackWrites, "guarded")
			assert.Equal(t, tc.restored, stats.stackRestores, "left as they are")
			ctx := context.Background()
			r := wazero.NewRuntime(ctx)
			defer r.Close(ctx)
			_, err = r.CompileModule(ctx, out)
			require.NoError(t, err)
		})
	}

	// Run: the prologue takes 16 bytes, then a write takes 16 more, below a mark 24 under the start.
	out, _, err := instrument(tinyModule(cat(prologue, []byte{0x20, 0x00, 0x41, 0x10, 0x6b, 0x24, 0x00}, restore)))
	require.NoError(t, err)
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	_, err = r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, stack []uint64) {
			mod.ExportedGlobal(exportFuel).(api.MutableGlobal).Set(1 << 20)
			stack[0] = 0
		}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}).
		Export("jsFunctionProxy").Instantiate(ctx)
	require.NoError(t, err)
	mod, err := r.InstantiateWithConfig(ctx, out, wazero.NewModuleConfig().WithStartFunctions())
	require.NoError(t, err)
	sp := mod.ExportedGlobal(exportStackPoint)
	low := mod.ExportedGlobal(exportStackLow).(api.MutableGlobal)
	start := uint32(sp.Get())
	low.Set(uint64(start - 24))
	_, err = mod.ExportedFunction("f").Call(ctx)
	require.Error(t, err, "the write below the mark traps")
	assert.Zero(t, uint32(low.Get()), "and zeroes the mark, which the host reads as the stack limit")
	assert.Equal(t, start-16, uint32(sp.Get()), "the prologue's write, above the mark, went through")
}
