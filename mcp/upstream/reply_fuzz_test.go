package upstream

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzReplyRouting plays requests and responses through a listingConn's bookkeeping in any order: each op byte
// sends a request (of one of four methods, with an id from the next byte) or answers an id with the result. A
// response is rewritten only as the request it answers asks for: a tools/list page goes through the listing
// filter, a read over the bound becomes ErrResultTooLarge's code, and everything else — an id never asked for,
// one already answered, another method, an error response — passes through untouched.
func FuzzReplyRouting(f *testing.F) {
	f.Add([]byte{0, 1, 4, 1, 4, 1}, []byte(`{"tools":[{"name":"a"}]}`), uint16(8))
	f.Add([]byte{1, 7, 2, 8, 5, 8, 4, 7, 3, 9, 4, 9}, []byte(`{"contents":[{"uri":"x","text":"long enough"}]}`), uint16(16))
	f.Add([]byte{2, 3, 6, 3, 2, 3, 4, 3}, []byte(`{"messages":[]}`), uint16(1))
	methods := []string{"tools/list", "resources/read", "prompts/get", "tools/call"}
	f.Fuzz(func(t *testing.T, ops, result []byte, bound uint16) {
		maxRead := int(bound) + 1
		var p pendingLists
		asked := map[int64]string{} // what the model of the bookkeeping expects
		for i := 0; i+1 < len(ops); i += 2 {
			op, id := ops[i]%7, int64(ops[i+1]%16)
			if op < 4 {
				req := &jsonrpc.Request{ID: mustID(id), Method: methods[op]}
				p.noteRequest(req)
				if filtered(req.Method) {
					asked[id] = req.Method
				}
				continue
			}
			resp := &jsonrpc.Response{ID: mustID(id), Result: bytes.Clone(result)}
			if op == 6 {
				resp.Error = &jsonrpc.Error{Code: 1, Message: "no"}
			}
			want := asked[id]
			delete(asked, id)
			method := p.take(resp.ID)
			require.Equal(t, want, method, "a response meets the request of its own id, once")
			before := *resp
			filterReply(resp, method, maxRead)
			switch {
			case before.Error != nil || method == "" || method == "tools/call":
				assert.Equal(t, before, *resp, "passed through")
			case method == "tools/list":
				assert.Equal(t, filterToolsPage(bytes.Clone(result)), []byte(resp.Result))
			case len(result) > maxRead:
				var wire *jsonrpc.Error
				require.ErrorAs(t, resp.Error, &wire)
				assert.Equal(t, int64(codeResultTooLarge), wire.Code)
				assert.Nil(t, resp.Result)
			default:
				assert.Equal(t, json.RawMessage(result), resp.Result, "a read within the bound is untouched")
				assert.Nil(t, resp.Error)
			}
		}
		assert.Equal(t, len(asked) == 0, p.empty())
	})
}

func mustID(n int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n)) // as decoded from JSON
	if err != nil {
		panic(err)
	}
	return id
}
