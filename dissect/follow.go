package dissect

import (
	"errors"
	"time"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/reassembly"
)

// Following a capture as it is made (a live capture, a pipe from tcpdump -U). Each message is
// shown as soon as the packet that completes it is read; but a connection's clock only moves
// with packets, so when packets stop coming, whatever waits for the clock (a segment reported
// lost after reassembly's FlushAfter, a response held back until its request is found, a
// connection left idle) would wait until the next packet, which may never come. follow reads
// the packets on a goroutine of its own, and while none arrives, lets the capture's clock go
// on with the wall clock.
//
// It does so only for a capture that is being made now: one whose latest packet arrived
// within madeNow of its own timestamp. A capture file replayed through a pipe (cat, zcat,
// <(...)) has timestamps of another day, and a pause of its writer (a loaded machine) says
// nothing of its clock: moving the clock then would report lost what the next packets bring,
// and close connections that go on, so that the output of a file would depend on timing. Its
// clock moves with its packets alone, as a file's does.

// idleFlush is how long, by the wall clock, no packet arrives before the connections are
// flushed: the interval at which the capture's clock flushes them (reassembly.FlushInterval).
// The pipeline's followClock.idle is this, except in tests that must tell a message shown by its packet
// from one shown by the wall clock.
const idleFlush = reassembly.FlushInterval

// madeNow bounds the lag between a packet's timestamp and its arrival for the capture to count
// as being made now: tcpdump -U writes each packet at once; a few seconds leave room for a
// remote capture's pipe and clocks that are not quite in step.
const madeNow = 5 * time.Second

// nextResult is what r.Next returned.
type nextResult struct {
	seg *capture.Segment
	err error
}

// follow returns a function that does what r.Next does, except that while it waits for a
// packet, every interval it calls idle with the time the capture's clock would show: the last
// packet's time plus the wall time since it arrived (wall tells the wall clock's time), as
// long as that packet arrived within madeNow of its timestamp. r.Next runs on a goroutine of its own, one
// call at a time, the next call only once the function is called again (a Segment is valid
// until the next call), until it returns an error that is not a *capture.PacketError; after
// that the function must not be called again. The goroutine ends with that error, so a caller
// that stops r (Reader.Stop makes a waiting Next return io.EOF) reads until the end.
func follow(r *capture.Reader, interval time.Duration, wall func() time.Time, idle func(now time.Time)) func() (*capture.Segment, error) {
	results := make(chan nextResult)
	resume := make(chan struct{})
	go func() {
		for {
			seg, err := r.Next()
			results <- nextResult{seg, err}
			var pe *capture.PacketError
			if err != nil && !errors.As(err, &pe) {
				return
			}
			<-resume
		}
	}()
	waiting := false // the goroutine waits for resume
	var last, arrived time.Time
	timer := time.NewTimer(interval)
	timer.Stop()
	take := func(res nextResult) (*capture.Segment, error) {
		var pe *capture.PacketError
		waiting = res.err == nil || errors.As(res.err, &pe)
		if res.seg != nil {
			last, arrived = res.seg.Info.Timestamp, wall()
		}
		return res.seg, res.err
	}
	return func() (*capture.Segment, error) {
		if waiting {
			resume <- struct{}{}
			waiting = false
		}
		timer.Reset(interval)
		for {
			select {
			case res := <-results:
				timer.Stop()
				return take(res)
			case <-timer.C:
			}
			// A packet that is ready goes first: the timer may have fired while this
			// goroutine waited for a core, with the next packet there all along.
			select {
			case res := <-results:
				return take(res)
			default:
			}
			if lag := arrived.Sub(last); !last.IsZero() && lag < madeNow && lag > -madeNow {
				idle(last.Add(wall().Sub(arrived)))
			}
			timer.Reset(interval)
		}
	}
}
