//go:build !linux

package capture

import "fmt"

func openLive(iface string, opt LiveOptions) (*Reader, error) {
	return nil, fmt.Errorf("capturing on %s: %w (AF_PACKET); elsewhere, capture with tcpdump -w FILE and dissect the file", iface, ErrLiveUnsupported)
}
