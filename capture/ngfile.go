package capture

import (
	"fmt"
	"io"
	"runtime"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// NgFile writes packets of any link type to a pcapng stream, one interface per link type, in
// the order they come: the files of the flight recorder and of rotating captures, which hold
// packets a live capture has kept aside rather than read from a Reader.
type NgFile struct {
	out     io.Writer
	w       *pcapgo.NgWriter
	iface   string
	comment string
	ifaces  map[layers.LinkType]int
	written int
}

// NewNgFile returns an NgFile writing to w; iface names the interfaces, comment (may be
// empty) is the section's comment. Nothing is written until the first packet or Flush.
func NewNgFile(w io.Writer, iface, comment string) *NgFile {
	return &NgFile{out: w, iface: iface, comment: comment, ifaces: map[layers.LinkType]int{}}
}

// Write writes one packet.
func (f *NgFile) Write(ci gopacket.CaptureInfo, lt layers.LinkType, data []byte) error {
	id, err := f.interfaceOf(lt)
	if err != nil {
		return err
	}
	ci.InterfaceIndex = id
	ci.CaptureLength = len(data)
	ci.AncillaryData = nil
	if ci.Length < len(data) {
		ci.Length = len(data)
	}
	if err := f.w.WritePacket(ci, data); err != nil {
		return err
	}
	f.written++
	return nil
}

// Written returns how many packets have been written.
func (f *NgFile) Written() int { return f.written }

func (f *NgFile) interfaceOf(lt layers.LinkType) (int, error) {
	if id, ok := f.ifaces[lt]; ok {
		return id, nil
	}
	intf := pcapgo.NgInterface{Name: f.iface, OS: runtime.GOOS, LinkType: lt, SnapLength: MaxCaptureLength, TimestampResolution: 9}
	if len(f.ifaces) > 0 {
		intf.Name = fmt.Sprintf("%s-%d", f.iface, len(f.ifaces))
	}
	var (
		id  int
		err error
	)
	if f.w == nil {
		f.w, err = pcapgo.NewNgWriterInterface(f.out, intf, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
			Hardware: runtime.GOARCH, OS: runtime.GOOS, Application: "kdissect", Comment: f.comment}})
	} else {
		id, err = f.w.AddInterface(intf)
	}
	if err != nil {
		return 0, err
	}
	f.ifaces[lt] = id
	return id, nil
}

// Flush writes what is buffered. A file that holds no packet yet gets its header and one
// Ethernet interface, so that it is a valid, empty pcapng file.
func (f *NgFile) Flush() error {
	if f.w == nil {
		if _, err := f.interfaceOf(layers.LinkTypeEthernet); err != nil {
			return err
		}
	}
	return f.w.Flush()
}
