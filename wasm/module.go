package wasm

import (
	_ "unsafe" // for go:linkname

	_ "github.com/fastschema/qjs" // links in the embedded QuickJS-NG WASI build; its Go host is never used
)

// quickJSModule is the QuickJS-NG WASI build embedded in github.com/fastschema/qjs v0.0.6. That package exposes
// no accessor, and its own host mounts the working directory read-write, writes to the real stdout and ignores
// its time limit, so only the bytes are taken. RATIONALE.md explains the choice; module_test.go pins the hash.
//
//go:linkname quickJSModule github.com/fastschema/qjs.wasmBytes
var quickJSModule []byte

// QuickJSModuleSHA256 is the hex SHA-256 of the embedded module. A dependency update that changes the bytes
// fails the pin test instead of silently running a different interpreter under our instrumentation.
const QuickJSModuleSHA256 = "88fcbeead33cca3ec8394feb0fb3eec8047ec9ac5062aba7a63799cee11989b7"
