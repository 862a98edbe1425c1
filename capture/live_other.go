//go:build !linux

package capture

import "fmt"

// openLive fails here: live capture reads an AF_PACKET socket. What to run instead (a capture
// tool piped into a reader of streams) is the command line's to say.
func openLive(iface string, opt LiveOptions) (*Reader, error) {
	return nil, fmt.Errorf("capturing on %s: %w (AF_PACKET)", iface, ErrLiveUnsupported)
}
