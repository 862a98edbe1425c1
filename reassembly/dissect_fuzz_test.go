package reassembly_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/reassembly"
)

// conversations is the smallest handler that takes frames all the way through the codec, as
// kdissect's pipeline does. release: frames are lent and each tree is released once read, as
// summaries do.
type conversations struct {
	c       *codec.Codec
	convs   map[*reassembly.Conn]*codec.Conversation
	t       *testing.T
	release bool
}

func (h *conversations) Open(c *reassembly.Conn) (reassembly.Checker, reassembly.Checker) {
	cv := h.c.NewConversation()
	h.convs[c] = cv
	return func(b []byte, synced bool) wire.Verdict { return cv.Check(true, b, synced) },
		func(b []byte, synced bool) wire.Verdict { return cv.Check(false, b, synced) }
}

func (h *conversations) Frame(f reassembly.Frame) {
	cv := h.convs[f.Conn]
	if f.Spilled != nil {
		cv.SetPaged(f.Spilled)
		defer cv.SetPaged(nil)
		if !h.release {
			defer f.Spilled.Close()
		}
	}
	var res codec.Result
	if f.Dir == reassembly.ToServer {
		res = cv.ClientFrame(f.Data, nil)
	} else {
		res = cv.ServerFrame(f.Data)
	}
	if res.Msg != nil {
		res.Msg.Facts()
		res.Msg.TopicIDNames()
		codec.Walk(res.Msg.Fields, func(n *codec.Node, _ int) bool {
			if !n.Decompressed && (n.Offset < 0 || n.Offset+n.Size > len(f.Data)) {
				h.t.Fatalf("node %s outside its frame", n.Name)
			}
			return true
		})
		if res.Msg.Unexpanded() {
			// Records decoded as JSON lines and diagrams do, a batch at a time (LazyRecords).
			var scratch codec.Nodes
			codec.Walk(res.Msg.Fields, func(n *codec.Node, _ int) bool {
				res.Msg.EachRecord(n, &scratch, func(c *codec.Node) {
					codec.Walk([]*codec.Node{c}, func(n *codec.Node, _ int) bool {
						if !n.Decompressed && (n.Offset < 0 || n.Offset+n.Size > len(f.Data)) {
							h.t.Fatalf("record node %s outside its frame", n.Name)
						}
						return true
					})
				})
				return true
			})
		}
		if h.release {
			h.c.Release(res.Msg)
		}
	}
}

func (h *conversations) Notice(reassembly.Notice) {}
func (h *conversations) Close(c *reassembly.Conn) { delete(h.convs, c) }

// FuzzDissect runs arbitrary bytes as a capture file through capture, reassembly with Kafka
// detection, the framer, the codec and records decoding: no panic, no hang, nodes inside frames.
// It does so three times: frames given and full trees kept; as summaries do, frames lent and
// shallow trees released, frames over 64 bytes in temporary files; and as JSON lines do,
// records expanded a batch at a time from frames in temporary files.
func FuzzDissect(f *testing.F) {
	for _, name := range []string{"kgo-produce-fetch.pcap", "kgo-midstream.pcap", "kgo-admin.pcapng"} {
		data, err := os.ReadFile(filepath.Join("..", "pcaps", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 3000)]) // small seeds mutate quickly
	}
	set, err := schema.Embedded()
	if err != nil {
		f.Fatal(err)
	}
	full := codec.New(set)
	full.Records = records.New(records.Options{MaxDecompressed: 1 << 20})
	shallow := codec.New(set)
	shallow.Shallow = true
	shallow.Records = records.New(records.Options{HeadersOnly: true, CountsOnly: true})
	lazy := codec.New(set)
	lazy.Records, lazy.LazyRecords = full.Records, true
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		for pass := range 3 {
			c, lent, spill := full, false, 0
			switch pass {
			case 1:
				c, lent, spill = shallow, true, 64
			case 2:
				c, spill = lazy, 64
			}
			r, err := capture.NewReader(bytes.NewReader(data), "fuzz.pcap")
			if err != nil {
				return
			}
			h := &conversations{c: c, convs: map[*reassembly.Conn]*codec.Conversation{}, t: t, release: lent}
			asm := reassembly.New(h, reassembly.Options{IsServerPort: func(p uint16) bool { return p == 9092 },
				ReuseFrames: lent, SpillOver: spill, SpillDir: dir,
				Detect: c.DetectRequest})
			for {
				seg, err := r.Next()
				if err != nil {
					if _, ok := err.(*capture.PacketError); ok {
						continue
					}
					break
				}
				asm.Add(seg)
			}
			asm.Close()
		}
	})
}
