package wasm

import (
	"reflect"

	"github.com/tetratelabs/wazero/api"
)

// maxIdleCallStackBytes is the most native call stack a pooled instance may keep per cached export. wazero grows
// an exported function's machine stack by doubling and never shrinks it: one deep but legal recursion (3,600 JS
// frames fit the default shadow stack) leaves that function holding ~50 MiB, and a pool of idle instances that
// each ran one would hold hundreds of MiB between runs. A function past this size is dropped after the run, and
// the next run that calls it gets a fresh one (10 KiB).
const maxIdleCallStackBytes = 256 << 10

// callStackBytes is the size of the machine stack wazero keeps for fn, or -1 when it cannot be read. wazero does
// not export it; its compiler keeps it in the function's `stack` field, which TestCallStackBytesReadable pins, so
// a wazero upgrade that moves it fails that test instead of silently pooling grown stacks.
func callStackBytes(fn api.Function) int {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return -1
	}
	stack := v.Elem().FieldByName("stack")
	if !stack.IsValid() || stack.Kind() != reflect.Slice {
		return -1
	}
	return stack.Len()
}

// dropGrownCallStacks forgets the cached exports whose machine stack grew past maxIdleCallStackBytes, or whose
// size cannot be read: what an idle instance costs the host stays bounded whatever its last run did.
func (inst *instance) dropGrownCallStacks() {
	for name, fn := range inst.fns {
		if n := callStackBytes(fn); n < 0 || n > maxIdleCallStackBytes {
			delete(inst.fns, name)
		}
	}
}
