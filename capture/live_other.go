//go:build !linux

package capture

import "fmt"

func openLive(iface string, opt LiveOptions) (*Reader, error) {
	return nil, fmt.Errorf("capturing on %s: %w (AF_PACKET); here, pipe a capture tool into kdissect, which dissects it as it arrives: tcpdump -i %s -U -w - 'tcp port 9092' | kdissect -p 9092 - (on Windows: dumpcap -i %s -w - -f 'tcp port 9092' | kdissect -p 9092 -)", iface, ErrLiveUnsupported, iface, iface)
}
