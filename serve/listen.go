package serve

import (
	"net"
	"net/http"
	"time"
)

// Loopback reports whether a listen address's host is loopback only ("" and 0.0.0.0 are
// every address).
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HTTPServer is the server of s's Handler, with the time and size of a request's headers
// bounded.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10}
}
