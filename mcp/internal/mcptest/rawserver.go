package mcptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// RawServer speaks just enough JSON-RPC by hand to play a server that no SDK would let us write: one that sends
// garbage, or pages forever. handle gets each request and returns the raw line to answer with ("" for none).
func RawServer(conn io.ReadWriteCloser, handle func(method string, id, params json.RawMessage) string) {
	defer conn.Close()
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.Method == "" || len(msg.ID) == 0 {
			continue // a response or a notification: nothing to answer
		}
		reply := handle(msg.Method, msg.ID, msg.Params)
		if reply == "" {
			switch msg.Method {
			case "initialize":
				reply = Result(msg.ID, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},`+
					`"serverInfo":{"name":"raw","version":"1"}}`)
			case "ping":
				reply = Result(msg.ID, `{}`)
			default:
				reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
			}
		}
		if _, err := conn.Write([]byte(reply + "\n")); err != nil {
			return
		}
	}
}

// Result is the line of a JSON-RPC result with id and body.
func Result(id json.RawMessage, body string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, body)
}
