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

// idleFlush is how long, by the wall clock, no packet arrives before the connections are
// flushed: the interval at which the capture's clock flushes them (reassembly.FlushInterval).
// Pipeline.idleFlush is this, except in tests that must tell a message shown by its packet
// from one shown by the wall clock.
const idleFlush = reassembly.FlushInterval

// nextResult is what r.Next returned.
type nextResult struct {
	seg *capture.Segment
	err error
}

// follow returns a function that does what r.Next does, except that while it waits for a
// packet, every interval it calls idle with the time the capture's clock would show: the last
// packet's time plus the wall time since it arrived. r.Next runs on a goroutine of its own, one
// call at a time, the next call only once the function is called again (a Segment is valid
// until the next call), until it returns an error that is not a *capture.PacketError; after
// that the function must not be called again. The goroutine ends with that error, so a caller
// that stops r (Reader.Stop makes a waiting Next return io.EOF) reads until the end.
func follow(r *capture.Reader, interval time.Duration, idle func(now time.Time)) func() (*capture.Segment, error) {
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
				var pe *capture.PacketError
				waiting = res.err == nil || errors.As(res.err, &pe)
				if res.seg != nil {
					last, arrived = res.seg.Info.Timestamp, time.Now()
				}
				return res.seg, res.err
			case <-timer.C:
				if !last.IsZero() {
					idle(last.Add(time.Since(arrived)))
				}
				timer.Reset(interval)
			}
		}
	}
}
