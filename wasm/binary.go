package wasm

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// The rewriter works at two levels: sections it does not touch are kept as raw bytes (so decoding and
// re-encoding an unmodified module is byte-for-byte identical), and the few sections it changes are decoded
// into just enough structure to append to them.

// Section ids of the WebAssembly binary format.
const (
	sectionCustom    = 0
	sectionType      = 1
	sectionImport    = 2
	sectionFunction  = 3
	sectionTable     = 4
	sectionMemory    = 5
	sectionGlobal    = 6
	sectionExport    = 7
	sectionStart     = 8
	sectionElement   = 9
	sectionCode      = 10
	sectionData      = 11
	sectionDataCount = 12
)

// Value types.
const (
	valI32 byte = 0x7f
	valI64 byte = 0x7e
	valF32 byte = 0x7d
	valF64 byte = 0x7c
)

// Import and export kinds.
const (
	externFunc   byte = 0x00
	externTable  byte = 0x01
	externMemory byte = 0x02
	externGlobal byte = 0x03
)

const wasmHeader = "\x00asm\x01\x00\x00\x00"

// errMalformed wraps every decoding failure, so callers can tell a bad module from an unsupported one.
var errMalformed = errors.New("wasm: malformed module")

type section struct {
	id      byte
	payload []byte
}

type module struct {
	sections []section
}

func decodeModule(b []byte) (*module, error) {
	if !bytes.HasPrefix(b, []byte(wasmHeader)) {
		return nil, fmt.Errorf("%w: bad header", errMalformed)
	}
	r := &reader{b: b, pos: len(wasmHeader)}
	m := &module{}
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		payload, err := r.bytes(int(size))
		if err != nil {
			return nil, err
		}
		m.sections = append(m.sections, section{id: id, payload: payload})
	}
	return m, nil
}

func (m *module) encode() []byte {
	var out bytes.Buffer
	out.WriteString(wasmHeader)
	for _, s := range m.sections {
		out.WriteByte(s.id)
		out.Write(appendU32(nil, uint32(len(s.payload))))
		out.Write(s.payload)
	}
	return out.Bytes()
}

func (m *module) section(id byte) *section {
	for i := range m.sections {
		if m.sections[i].id == id {
			return &m.sections[i]
		}
	}
	return nil
}

// funcType is a function signature.
type funcType struct {
	params, results []byte
}

func (t funcType) equal(o funcType) bool {
	return bytes.Equal(t.params, o.params) && bytes.Equal(t.results, o.results)
}

func (t funcType) encode(b []byte) []byte {
	b = append(b, 0x60)
	b = appendU32(b, uint32(len(t.params)))
	b = append(b, t.params...)
	b = appendU32(b, uint32(len(t.results)))
	return append(b, t.results...)
}

func decodeTypes(payload []byte) ([]funcType, error) {
	r := &reader{b: payload}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	types := make([]funcType, 0, r.capacity(n))
	for range n {
		form, err := r.byte()
		if err != nil {
			return nil, err
		}
		if form != 0x60 {
			return nil, fmt.Errorf("%w: type form 0x%x", errMalformed, form)
		}
		var t funcType
		for _, dst := range []*[]byte{&t.params, &t.results} {
			k, err := r.u32()
			if err != nil {
				return nil, err
			}
			v, err := r.bytes(int(k))
			if err != nil {
				return nil, err
			}
			*dst = v
		}
		types = append(types, t)
	}
	return types, r.expectEnd()
}

func encodeVector[T any](items []T, enc func([]byte, T) []byte) []byte {
	b := appendU32(nil, uint32(len(items)))
	for _, it := range items {
		b = enc(b, it)
	}
	return b
}

// importEntry keeps an import's descriptor raw; only the counts per kind and function type indices matter.
type importEntry struct {
	module, name string
	kind         byte
	typeIndex    uint32 // functions only
}

func decodeImports(payload []byte) ([]importEntry, error) {
	r := &reader{b: payload}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := make([]importEntry, 0, r.capacity(n))
	for range n {
		var e importEntry
		if e.module, err = r.name(); err != nil {
			return nil, err
		}
		if e.name, err = r.name(); err != nil {
			return nil, err
		}
		if e.kind, err = r.byte(); err != nil {
			return nil, err
		}
		switch e.kind {
		case externFunc:
			if e.typeIndex, err = r.u32(); err != nil {
				return nil, err
			}
		case externTable:
			if _, err = r.byte(); err != nil {
				return nil, err
			}
			if err = r.skipLimits(); err != nil {
				return nil, err
			}
		case externMemory:
			if err = r.skipLimits(); err != nil {
				return nil, err
			}
		case externGlobal:
			if _, err = r.bytes(2); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: import kind 0x%x", errMalformed, e.kind)
		}
		out = append(out, e)
	}
	return out, r.expectEnd()
}

type exportEntry struct {
	name  string
	kind  byte
	index uint32
}

func decodeExports(payload []byte) ([]exportEntry, error) {
	r := &reader{b: payload}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := make([]exportEntry, 0, r.capacity(n))
	for range n {
		var e exportEntry
		if e.name, err = r.name(); err != nil {
			return nil, err
		}
		if e.kind, err = r.byte(); err != nil {
			return nil, err
		}
		if e.index, err = r.u32(); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, r.expectEnd()
}

func encodeExport(b []byte, e exportEntry) []byte {
	b = appendName(b, e.name)
	b = append(b, e.kind)
	return appendU32(b, e.index)
}

// vectorItems splits a section that is a vector of self-delimiting items into its count and raw remainder,
// for sections the rewriter only appends to (function, global, code).
func vectorItems(payload []byte) (count uint32, rest []byte, err error) {
	r := &reader{b: payload}
	if count, err = r.u32(); err != nil {
		return 0, nil, err
	}
	return count, payload[r.pos:], nil
}

// reader decodes LEB128 and friends from a byte slice, failing (never panicking) on truncated input.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) done() bool { return r.pos >= len(r.b) }

// capacity bounds a preallocation for a vector that claims n items: each item takes at least one byte, so a
// count larger than what is left is a lie that must not turn into a multi-gigabyte allocation (a fuzz finding).
func (r *reader) capacity(n uint32) int { return min(int(n), len(r.b)-r.pos) }

// localGroups reads a function body's n declarations of locals (a count and a type each) and returns how many
// locals they declare.
func (r *reader) localGroups(n uint32) (uint64, error) {
	var locals uint64
	for range n {
		count, err := r.u32()
		if err != nil {
			return 0, err
		}
		if _, err := r.byte(); err != nil {
			return 0, err
		}
		locals += uint64(count)
	}
	return locals, nil
}

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, fmt.Errorf("%w: unexpected end at %d", errMalformed, r.pos)
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || r.pos+n > len(r.b) {
		return nil, fmt.Errorf("%w: %d bytes past end at %d", errMalformed, n, r.pos)
	}
	v := r.b[r.pos : r.pos+n]
	r.pos += n
	return v, nil
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

func (r *reader) uleb(bits uint) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= bits+7 {
			return 0, fmt.Errorf("%w: LEB128 too long at %d", errMalformed, r.pos)
		}
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

// sleb reads a signed LEB128 of at most bits bits.
func (r *reader) sleb(bits uint) (int64, error) {
	var v int64
	for shift := uint(0); ; shift += 7 {
		if shift >= bits+7 {
			return 0, fmt.Errorf("%w: LEB128 too long at %d", errMalformed, r.pos)
		}
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			if shift+7 < 64 && c&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v, nil
		}
	}
}

// dataAddresses returns the memory addresses at which needle starts in the module's active data segments. Only
// segments placed by a constant offset (all the C toolchain emits) that do not overlap are accepted: a later
// segment overwriting an earlier one would make a found address lie.
func dataAddresses(payload []byte, needle []byte) ([]uint32, error) {
	count, rest, err := vectorItems(payload)
	if err != nil {
		return nil, err
	}
	r := &reader{b: rest}
	var out []uint32
	type span struct{ from, to uint64 }
	var spans []span
	for range count {
		flags, err := r.u32()
		if err != nil {
			return nil, err
		}
		var offset int64
		switch flags {
		case 0: // active, memory 0, offset expression
			op, err := r.byte()
			if err != nil {
				return nil, err
			}
			if op != 0x41 {
				return nil, fmt.Errorf("%w: data segment offset is not an i32.const", ErrUnsupportedModule)
			}
			if offset, err = r.sleb(32); err != nil {
				return nil, err
			}
			if end, err := r.byte(); err != nil || end != 0x0b {
				return nil, fmt.Errorf("%w: data segment offset expression", errMalformed)
			}
		case 1: // passive: not in memory until memory.init
		default:
			return nil, fmt.Errorf("%w: data segment kind %d", ErrUnsupportedModule, flags)
		}
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		data, err := r.bytes(int(n))
		if err != nil {
			return nil, err
		}
		if flags != 0 {
			continue
		}
		from := uint64(uint32(offset)) // the offset is an i32 read as unsigned
		if from+uint64(len(data)) > 1<<32 {
			return nil, fmt.Errorf("%w: data segment beyond 4 GiB", errMalformed)
		}
		spans = append(spans, span{from, from + uint64(len(data))})
		for i := 0; ; {
			j := bytes.Index(data[i:], needle)
			if j < 0 {
				break
			}
			out = append(out, uint32(offset)+uint32(i+j))
			i += j + 1
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	for i := 1; i < len(spans); i++ {
		if spans[i].from < spans[i-1].to {
			return nil, fmt.Errorf("%w: overlapping data segments", ErrUnsupportedModule)
		}
	}
	return out, r.expectEnd()
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(int(n))
	return string(b), err
}

func (r *reader) skipLimits() error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flag&1 != 0 {
		_, err = r.u32()
	}
	return err
}

func (r *reader) expectEnd() error {
	if !r.done() {
		return fmt.Errorf("%w: %d trailing bytes", errMalformed, len(r.b)-r.pos)
	}
	return nil
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}
