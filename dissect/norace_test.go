//go:build !race

package dissect

const raceEnabled = false
