//go:build race

package codec

// raceEnabled: the race detector is on, and sync.Pool drops some of what it is given, so that
// allocation counts say nothing about reuse.
const raceEnabled = true
