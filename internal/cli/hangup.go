package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// Hangups calls a function at each SIGHUP, from the moment it is made until Release: the
// signal by which log rotation asks a program to close its files and open new ones.
type Hangups struct {
	signals chan os.Signal
	quit    chan struct{}
	done    chan struct{}
}

// CatchHangups calls fn at each SIGHUP, on a goroutine of its own.
func CatchHangups(fn func()) *Hangups {
	h := &Hangups{signals: make(chan os.Signal, 1), quit: make(chan struct{}), done: make(chan struct{})}
	signal.Notify(h.signals, syscall.SIGHUP)
	go func() {
		defer close(h.done)
		for {
			select {
			case <-h.signals:
				fn()
			case <-h.quit:
				return
			}
		}
	}()
	return h
}

// Release stops catching SIGHUP and waits for a call of fn under way. Call it once.
func (h *Hangups) Release() {
	signal.Stop(h.signals)
	close(h.quit)
	<-h.done
}
