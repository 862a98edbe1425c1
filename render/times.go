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
		b = appendSeconds(b, t.Sub(c.start))
		if labelled {
			b = append(b, " s since the first packet"...)
		}
		return b
	case TimeDelta:
		if prev.IsZero() {
			prev = t
		}
		b = appendSeconds(b, t.Sub(prev))
		if labelled {
			b = append(b, " s since the previous message"...)
		}
		return b
	case TimeEpoch:
		b = append(strconv.AppendInt(b, t.Unix(), 10), '.')
		b = appendDecimals(b, int64(t.Nanosecond()/1000), 1e6)
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

// appendSeconds appends d in seconds with 6 decimals, as strconv.AppendFloat(b, d.Seconds(),
// 'f', 6, 64) does. Most durations are written from their integer microseconds, without
// the float: where the float is that close to d that both round to the same microsecond
// (a capture under 12 days long, d not halfway between two microseconds).
func appendSeconds(b []byte, d time.Duration) []byte {
	// Below 2^20 s, d.Seconds() is within 2^-32 s of d: the rounding of a d 1 ns away from
	// halfway or more is the float's.
	if d < 0 || d >= 1<<20*time.Second || d%time.Microsecond == time.Microsecond/2 {
		return strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64)
	}
	us := int64((d + time.Microsecond/2) / time.Microsecond)
	return appendFixed(b, us, 1e6)
}

// appendFixed appends n/unit, n >= 0 and unit a power of ten, with the decimals unit has.
func appendFixed(b []byte, n, unit int64) []byte {
	return appendDecimals(append(strconv.AppendInt(b, n/unit, 10), '.'), n%unit, unit)
}

// appendDecimals appends the decimals of n/unit, 0 <= n < unit and unit a power of ten: n with
// as many digits as unit has zeros.
func appendDecimals(b []byte, n, unit int64) []byte {
	var digits [18]byte
	i := len(digits)
	for ; unit > 1 && i > 0; unit /= 10 { // from the last digit: dividing by 10 alone
		i--
		digits[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, digits[i:]...)
}
