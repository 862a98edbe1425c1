package serve

import "time"

// SetEvalTimeout sets how long one evaluation of a display filter over the held messages may
// take (a test's short bound).
func SetEvalTimeout(s *Server, d time.Duration) { s.evalTimeout = d }
