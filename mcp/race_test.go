//go:build race

package mcp

// raceEnabled is set under the race detector, which multiplies the memory and time of everything.
const raceEnabled = true
