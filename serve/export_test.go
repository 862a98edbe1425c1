package serve

import (
	"time"

	"github.com/kdissect/kdissect/render"
)

// SetEvalTimeout sets how long one evaluation of a display filter over the held messages may
// take (a test's short bound).
func SetEvalTimeout(s *Server, d time.Duration) { s.evalTimeout = d }

// TakeEvals takes every evaluation slot, as filters running would, until the function
// returned is called.
func TakeEvals(s *Server) (give func()) {
	for range cap(s.evals) {
		s.evals <- struct{}{}
	}
	return func() {
		for range cap(s.evals) {
			<-s.evals
		}
	}
}

// UploadNeeds is what /upload decodes of each message of a capture.
func UploadNeeds() render.Needs { return uploadNeeds() }

// UploadHeld dissects data as /upload does, and says how many messages it found and how many
// entries (decoded trees) its dissection held until it was answered.
func UploadHeld(s *Server, data []byte) (msgs, entries int, err error) {
	out, err := s.dissect(data, "upload", holdPages)
	if out == nil {
		return 0, 0, err
	}
	for _, h := range out.msgs {
		if h.e != nil {
			entries++
		}
	}
	return len(out.msgs), entries, err
}
