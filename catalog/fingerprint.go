package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"maps"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// fingerprintOf hashes everything New reads: every field of every tool, in id order, and the options. Equal
// fingerprints mean New would build an equal catalog, which is what lets a Cache reuse one.
func fingerprintOf(tools []Tool, opts *Options) string {
	h := sha256.New()
	order := make([]int, len(tools))
	ids := make([]string, len(tools))
	for i := range order {
		order[i], ids[i] = i, tools[i].ID()
	}
	sort.SliceStable(order, func(a, b int) bool { return ids[order[a]] < ids[order[b]] })
	for _, i := range order {
		t := &tools[i]
		writeField(h, string(t.Source))
		writeField(h, t.SourceName)
		writeField(h, t.Name)
		writeField(h, t.ListedName)
		writeField(h, t.Label)
		writeField(h, t.Description)
		writeField(h, string(t.Parameters))
		writeField(h, string(t.OutputSchema))
		writeField(h, t.CatalogMode)
		writeField(h, strings.Join(t.Groups, "\x00"))
		writeField(h, annotationsText(t.Annotations))
		writeField(h, fmt.Sprint(t.TrustedByUser))
		writeField(h, handlerIdentity(t.Handler))
	}
	writeField(h, "options")
	if opts != nil {
		def, maxLimit := opts.limits()
		writeField(h, fmt.Sprint(def, maxLimit))
		writeField(h, strings.Join(opts.ReservedNames, "\x00"))
		writeField(h, fmt.Sprint(opts.CheckSchema != nil))
		if s := opts.Signatures; s != nil {
			writeField(h, fmt.Sprint(s.MaxDepth, s.MaxProperties, s.MaxUnionVariants, s.MaxEnumValues, s.MaxChars))
		}
		if p := opts.Policy; p != nil {
			for _, r := range p.layers() {
				writeField(h, strings.Join(r.Allow, "\x00"))
				writeField(h, strings.Join(r.Deny, "\x00"))
				writeField(h, strings.Join(r.Ask, "\x00"))
				writeField(h, strings.Join(r.AutoApprove, "\x00"))
			}
			for _, g := range slices.Sorted(maps.Keys(p.Groups)) {
				writeField(h, g)
				writeField(h, strings.Join(p.Groups[g], "\x00"))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// annotationsText spells out every hint, set or not, so that two different annotation sets never hash alike.
func annotationsText(a *Annotations) string {
	if a == nil {
		return "none"
	}
	var b strings.Builder
	for _, v := range [...]*bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint} {
		switch {
		case v == nil:
			b.WriteByte('-')
		case *v:
			b.WriteByte('1')
		default:
			b.WriteByte('0')
		}
	}
	return b.String()
}

// writeField writes a length-prefixed field, so that no two different tool sets hash the same byte stream.
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	// A hash neither keeps nor changes what it is given, so the string's bytes are hashed in place: a tool with
	// a description of megabytes must not cost a copy of it on every run.
	h.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// handlerIdentity names the handler value itself, not just its type: a rebuilt closure over a new connection is
// a different handler even though its code is the same, and reusing a catalog would call the stale one.
// An interface value is a (type, data) word pair; for pointer-shaped handlers (pointers, funcs such as
// HandlerFunc closures, maps, chans) the data word is the identity. For other kinds it points at the boxed copy
// made when the interface was built, so an unchanged Tool keeps its identity while a re-boxed value rebuilds,
// which is the safe direction.
func handlerIdentity(h Handler) string {
	if h == nil {
		return "nil"
	}
	words := (*[2]uintptr)(unsafe.Pointer(&h))
	return fmt.Sprintf("%T@%x", h, words[1])
}
