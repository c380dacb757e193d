package bench

import (
	"os"
	"testing"

	"github.com/toolsearch/toolsearch/internal/testskip"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testskip.Report()
	os.Exit(code)
}
