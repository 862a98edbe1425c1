package render

import (
	"fmt"
	"strconv"
	"time"
)

// TimeFormat is how summaries and diagram headings show a message's time, as tshark's -t
// does. Times of day and dates are UTC, and say so where the line has room.
type TimeFormat uint8

const (
	// TimeDefault is each format's own: relative to the first packet in summaries, the date
	// and time of day in diagrams.
	TimeDefault TimeFormat = iota
	TimeAbsDate            // ad: date and time of day
	TimeAbs                // a: time of day
	TimeRel                // r: seconds since the first packet (of all the files read)
	TimeDelta              // d: seconds since the previous message or notice shown (of the same file)
	TimeEpoch              // e: seconds since 1970-01-01 UTC
)

// timeFormats are the -t names, in the order of the constants.
var timeFormats = []string{"", "ad", "a", "r", "d", "e"}

// ParseTimeFormat reads a -t value: ad, a, r, d or e; "" (not given) is TimeDefault.
func ParseTimeFormat(s string) (TimeFormat, error) {
	for i, name := range timeFormats {
		if name == s {
			return TimeFormat(i), nil
		}
	}
	return TimeDefault, fmt.Errorf("unknown time format %q (ad: date and time, a: time of day, r: since the first packet, d: since the previous message, e: epoch)", s)
}

// String is the -t name ("" for TimeDefault).
func (f TimeFormat) String() string {
	if int(f) < len(timeFormats) {
		return timeFormats[f]
	}
	return strconv.Itoa(int(f))
}

// clock shows times in one format: it keeps the first packet's time (for r) and the time of
// the line shown last (for d).
type clock struct {
	format      TimeFormat
	start, prev time.Time
}

// setStart sets the time relative times count from, if it is not set yet.
func (c *clock) setStart(t time.Time) {
	if c.start.IsZero() {
		c.start = t
	}
}

// newFile starts the lines of another capture file: the first of them has no previous line
// to count from (d), since the files may not come in time order.
func (c *clock) newFile() { c.prev = time.Time{} }

// appendTime appends t as the format shows it. labelled: the line shows the unit or the time
// zone (a diagram heading); otherwise the bare number or time, for a column (a summary).
func (c *clock) appendTime(b []byte, t time.Time, labelled bool) []byte {
	c.setStart(t)
	prev := c.prev
	c.prev = t
	t = t.UTC()
	switch c.format {
	case TimeAbsDate:
		b = t.AppendFormat(b, "2006-01-02 15:04:05.000000")
	case TimeAbs:
		b = t.AppendFormat(b, "15:04:05.000000")
	case TimeRel:
		b = strconv.AppendFloat(b, t.Sub(c.start).Seconds(), 'f', 6, 64)
		if labelled {
			b = append(b, " s since the first packet"...)
		}
		return b
	case TimeDelta:
		if prev.IsZero() {
			prev = t
		}
		b = strconv.AppendFloat(b, t.Sub(prev).Seconds(), 'f', 6, 64)
		if labelled {
			b = append(b, " s since the previous message"...)
		}
		return b
	case TimeEpoch:
		b = strconv.AppendInt(b, t.Unix(), 10)
		b = append(b, '.')
		us := t.Nanosecond() / 1000
		for d := 100000; d > 0; d /= 10 {
			b = append(b, byte('0'+us/d%10))
		}
		if labelled {
			b = append(b, " (epoch)"...)
		}
		return b
	}
	if labelled {
		b = append(b, " UTC"...)
	}
	return b
}
