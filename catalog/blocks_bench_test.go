//go:build linux

package catalog

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/synthetic"
)

// BenchmarkSearchBlocks times each query scored at once and a block at a time, in turn, on one index, in CPU
// time of the thread (x-whole: blocked ÷ at once), for several block sizes. TOOLSEARCH_BLOCK_TOOLS sets the
// catalog's size (100,000 by default; 1000000 builds for about a minute and holds about 2 GB). Its correctness
// twin is TestBlockedScoringRanksAsFullScoring: both ways rank the same. The blocked search runs second, on lists
// the first just read: at 100,000 tools, where they fit the shared cache, that favours it.
func BenchmarkSearchBlocks(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("TOOLSEARCH_BLOCK_TOOLS")); err == nil {
		n = v
	}
	tools := synthTools(n)
	c, err := newCatalog(tools, nil, "", &counters{}, defaultRankConfig())
	require.NoError(b, err)
	for _, long := range []bool{false, true} {
		for _, blk := range []int{1 << 13, 1 << 14, 1 << 15, 1 << 16} {
			b.Run(fmt.Sprintf("long=%v/block=%d", long, blk), func(b *testing.B) {
				qs := synthQueries(tools)
				if long {
					qs = synthetic.LongQueries()
				}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var whole, blocked time.Duration
				for i := 0; b.Loop(); i++ {
					q := qs[i%len(qs)]
					c.ix.cfg.blockDocs = 0
					t0 := threadCPU()
					c.ix.search(q, 10)
					t1 := threadCPU()
					c.ix.cfg.blockDocs, c.ix.cfg.blockAbove = blk, 0
					c.ix.search(q, 10)
					whole, blocked = whole+t1-t0, blocked+threadCPU()-t1
				}
				b.ReportMetric(float64(whole.Nanoseconds())/float64(b.N), "whole-ns/q")
				b.ReportMetric(float64(blocked.Nanoseconds())/float64(b.N), "blocked-ns/q")
				b.ReportMetric(float64(blocked)/float64(whole), "x-whole")
			})
		}
	}
}

func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
