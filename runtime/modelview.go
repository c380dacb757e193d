package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// This file shapes what the model reads of a result: compact JSON, and text bounded by Config.MaxResultBytes.
// The model pays for every byte, so nothing here indents, escapes what needs no escaping, or passes on a
// result of megabytes whole.

// marshalJSON is json.Marshal without HTML escaping: the model reads this JSON, not a browser, and an escaped "<"
// costs six bytes (every Array<string> of a hint would pay twice).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// compactJSON is raw without insignificant white space, or raw itself when it is not valid JSON.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// boundResult keeps a result's text within maxBytes: the head and the tail, and between them a line saying how
// much was cut, so the model knows it did not see everything.
func boundResult(text string, maxBytes int) string {
	return textcut.HeadTail(text, maxBytes, func(cut int) string {
		return fmt.Sprintf("\n[... %d of %d bytes cut here: a result the model sees is at most %d bytes ...]\n",
			cut, len(text), maxBytes)
	})
}
