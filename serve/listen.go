package serve

import (
	"net"
	"net/http"
	"net/netip"
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

// Hosts are the hosts a server listening on host can be reached at, for the URLs to give:
// host itself (a name, an address), or for every address ("", 0.0.0.0, ::) each of the
// machine's interface addresses ifaces of that family (0.0.0.0: IPv4; "" and ::, both),
// loopback last. Link-local addresses are left out: a URL with one needs the interface's zone,
// which browsers do not take.
func Hosts(host string, ifaces []netip.Addr) []string {
	ip, err := netip.ParseAddr(host)
	if host != "" && (err != nil || !ip.IsUnspecified()) {
		return []string{host}
	}
	var hosts, loopback []string
	for _, a := range ifaces {
		a = a.Unmap()
		switch {
		case host != "" && ip.Is4() && !a.Is4(), a.IsLinkLocalUnicast(), a.IsUnspecified():
		case a.IsLoopback():
			loopback = append(loopback, a.String())
		default:
			hosts = append(hosts, a.String())
		}
	}
	return append(hosts, loopback...)
}
