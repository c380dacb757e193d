package jsprep

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
)

// sourceMap is the part of a version 3 source map that maps positions back: for each generated line, its
// segments sorted by generated column. Lines and columns are 0-based.
type sourceMap struct {
	lines [][]segment
}

type segment struct{ genCol, srcLine, srcCol int }

func parseSourceMap(data []byte) (*sourceMap, error) {
	var raw struct {
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	sm := &sourceMap{}
	var srcLine, srcCol, srcIdx int
	for _, line := range strings.Split(raw.Mappings, ";") {
		var segs []segment
		genCol := 0
		for _, field := range strings.Split(line, ",") {
			if field == "" {
				continue
			}
			v, err := decodeVLQ(field)
			if err != nil {
				return nil, err
			}
			genCol += v[0]
			if len(v) < 4 {
				continue // a segment without a source position
			}
			srcIdx += v[1]
			srcLine += v[2]
			srcCol += v[3]
			segs = append(segs, segment{genCol, srcLine, srcCol})
		}
		sort.SliceStable(segs, func(i, j int) bool { return segs[i].genCol < segs[j].genCol })
		sm.lines = append(sm.lines, segs)
	}
	_ = srcIdx // one source only
	return sm, nil
}

// lookup maps a generated position to the source: the segment at or before col on line, else the last one on
// an earlier line.
func (m *sourceMap) lookup(line, col int) (int, int, bool) {
	if line < 0 || line >= len(m.lines) {
		return 0, 0, false
	}
	segs := m.lines[line]
	i := sort.Search(len(segs), func(i int) bool { return segs[i].genCol > col })
	if i > 0 {
		s := segs[i-1]
		return s.srcLine, s.srcCol, true // esbuild maps tokens; a column inside one maps to its start
	}
	if len(segs) > 0 {
		return segs[0].srcLine, segs[0].srcCol, true
	}
	for l := line - 1; l >= 0; l-- {
		if n := len(m.lines[l]); n > 0 {
			s := m.lines[l][n-1]
			return s.srcLine, s.srcCol, true
		}
	}
	return 0, 0, false
}

var errVLQ = errors.New("bad VLQ in source map")

func decodeVLQ(s string) ([]int, error) {
	var out []int
	value, shift := 0, 0
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", s[i])
		if d < 0 || shift > 30 {
			return nil, errVLQ
		}
		value += (d & 31) << shift
		if d&32 != 0 {
			shift += 5
			continue
		}
		n := value >> 1
		if value&1 != 0 {
			n = -n
		}
		out = append(out, n)
		value, shift = 0, 0
	}
	if shift != 0 {
		return nil, errVLQ
	}
	return out, nil
}
