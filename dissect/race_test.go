//go:build race

package dissect

// raceEnabled: the race detector is on, and slows everything down several times.
const raceEnabled = true
