package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	keys := []string{"enabled", "mode", "codeTimeoutMs", "maxSearchLimit"}
	for _, tt := range []struct {
		in, want string
		dist     int
	}{
		{"mdoe", "mode", 2},
		{"CodeTimeoutMS", "codeTimeoutMs", 0},
		{"maxSearchLimt", "maxSearchLimit", 1},
		{"enable", "enabled", 1},
	} {
		got, d := Closest(tt.in, keys)
		assert.Equal(t, tt.want, got, tt.in)
		assert.Equal(t, tt.dist, d, tt.in)
	}
	got, d := Closest("x", nil)
	assert.Equal(t, "", got)
	assert.Equal(t, -1, d)
	assert.Equal(t, 3, Distance("kitten", "sitting"))
	assert.Equal(t, 0, Distance("", ""))
}
