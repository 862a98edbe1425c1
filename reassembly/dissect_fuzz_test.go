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
	"github.com/kdissect/kdissect/reassembly"
)

// conversations is the smallest handler that takes frames all the way through the codec, as
// kdissect's pipeline does.
type conversations struct {
	c     *codec.Codec
	convs map[*reassembly.Conn]*codec.Conversation
	t     *testing.T
}

func (h *conversations) Open(c *reassembly.Conn) (reassembly.Checker, reassembly.Checker) {
	cv := h.c.NewConversation()
	h.convs[c] = cv
	return func(b []byte, synced bool) reassembly.Verdict { return reassembly.Verdict(cv.Check(true, b, synced)) },
		func(b []byte, synced bool) reassembly.Verdict { return reassembly.Verdict(cv.Check(false, b, synced)) }
}

func (h *conversations) Frame(f reassembly.Frame) {
	cv := h.convs[f.Conn]
	var res codec.Result
	if f.Dir == reassembly.ToServer {
		res = cv.ClientFrame(f.Data, nil)
	} else {
		res = cv.ServerFrame(f.Data)
	}
	if res.Msg != nil {
		facts := res.Msg.Facts()
		_ = facts
		codec.Walk(res.Msg.Fields, func(n *codec.Node, _ int) bool {
			if !n.Decompressed && (n.Offset < 0 || n.Offset+n.Size > len(f.Data)) {
				h.t.Fatalf("node %s outside its frame", n.Name)
			}
			return true
		})
	}
}

func (h *conversations) Notice(reassembly.Notice) {}
func (h *conversations) Close(c *reassembly.Conn) { delete(h.convs, c) }

// FuzzDissect runs arbitrary bytes as a capture file through capture, reassembly with Kafka
// detection, the framer, the codec and records decoding: no panic, no hang, nodes inside frames.
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
	c := codec.New(set)
	c.Records = records.New(records.Options{MaxDecompressed: 1 << 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := capture.NewReader(bytes.NewReader(data), "fuzz.pcap")
		if err != nil {
			return
		}
		h := &conversations{c: c, convs: map[*reassembly.Conn]*codec.Conversation{}, t: t}
		asm := reassembly.New(h, reassembly.Options{IsServerPort: func(p uint16) bool { return p == 9092 },
			Detect: func(b []byte, strict bool) (reassembly.Verdict, string) {
				v, why := c.DetectRequest(b, strict)
				return reassembly.Verdict(v), why
			}})
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
	})
}
