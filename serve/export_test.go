package serve

import "time"

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
