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
	// done is closed when the goroutine Serve starts has returned; nil before Serve.
	done chan struct{}
}

// CatchHangups starts catching SIGHUP. One caught before Serve is kept for it: a program
// catches them before it creates the first file a SIGHUP would close, and serves them once
// it can close it, so that none sent meanwhile is lost (nor kills the program).
func CatchHangups() *Hangups {
	h := &Hangups{signals: make(chan os.Signal, 1), quit: make(chan struct{})}
	signal.Notify(h.signals, syscall.SIGHUP)
	return h
}

// Serve calls fn at each SIGHUP caught, on a goroutine of its own, until Release. Call it
// once.
func (h *Hangups) Serve(fn func()) {
	h.done = make(chan struct{})
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
}

// Release stops catching SIGHUP and waits for a call of fn under way. Call it once.
func (h *Hangups) Release() {
	signal.Stop(h.signals)
	close(h.quit)
	if h.done != nil {
		<-h.done
	}
}
