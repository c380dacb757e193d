//go:build !race

package upstream

// raceEnabled is set under the race detector, which multiplies the memory and time of everything.
const raceEnabled = false
