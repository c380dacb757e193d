package wasm

import (
	"reflect"
	"sync"

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
	i := stackFieldOf(v.Type().Elem())
	if i < 0 {
		return -1
	}
	return v.Elem().Field(i).Len()
}

// stackFields caches, per function type, the index of its slice field "stack" (-1: none): looking a field up
// by name costs more than the rest of the check, and runs after every run.
var stackFields sync.Map // reflect.Type → int

func stackFieldOf(t reflect.Type) int {
	if i, ok := stackFields.Load(t); ok {
		return i.(int)
	}
	i := -1
	if f, ok := t.FieldByName("stack"); ok && len(f.Index) == 1 && f.Type.Kind() == reflect.Slice {
		i = f.Index[0]
	}
	stackFields.Store(t, i)
	return i
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
