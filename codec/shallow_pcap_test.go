package codec_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/records"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/pcaps"
	"github.com/kdissect/kdissect/reassembly"
	"github.com/kdissect/kdissect/reassembly/tlsdec"
)

// twinPipelines follows every connection of a capture twice, with a full and a shallow codec,
// as kdissect's pipeline does (one conversation per connection, topic names learnt across
// the capture), and compares what comes out of each frame.
type twinPipelines struct {
	t                   *testing.T
	name                string
	full, shallow       *codec.Codec
	convs               map[*reassembly.Conn][2]*codec.Conversation
	fullNames, shNames  *codec.TopicNames
	frames, metadata    int
	fullNodes, shNodes  int
	fullMeta, shMeta    int
	warnings, errorsSet int
	encodings           codec.EncodingCounts
	// walker gathers the facts of every shallow message, one after another, as the pipeline's
	// decoders do.
	walker codec.FactsWalker
}

func (p *twinPipelines) Open(c *reassembly.Conn) (reassembly.Checker, reassembly.Checker) {
	cv := [2]*codec.Conversation{p.full.NewConversation(), p.shallow.NewConversation()}
	p.convs[c] = cv
	// The framer asks the full conversation: both see the same frames.
	return func(b []byte, synced bool) wire.Verdict { return cv[0].Check(true, b, synced) },
		func(b []byte, synced bool) wire.Verdict { return cv[0].Check(false, b, synced) }
}

func (p *twinPipelines) Frame(f reassembly.Frame) {
	cv := p.convs[f.Conn]
	var res [2]codec.Result
	for i := range res {
		if f.Dir == reassembly.ToServer {
			res[i] = cv[i].ClientFrame(append([]byte(nil), f.Data...), nil)
		} else {
			res[i] = cv[i].ServerFrame(append([]byte(nil), f.Data...))
		}
	}
	where := fmt.Sprintf("%s: frame of packets %d-%d", p.name, f.FirstPacket, f.LastPacket)
	full, sh := res[0], res[1]
	pending := func(r *codec.Pending) string {
		if r == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%d v%d corr %d", r.APIKey, r.Version, r.CorrelationID)
	}
	if full.SASLToken != sh.SASLToken || full.NoResponse != sh.NoResponse || pending(full.Request) != pending(sh.Request) || (full.Msg == nil) != (sh.Msg == nil) {
		p.t.Fatalf("%s: results differ: full %+v (request %s), shallow %+v (request %s)", where, full, pending(full.Request), sh, pending(sh.Request))
	}
	if full.Msg == nil {
		return
	}
	p.frames++
	problems, counts := codec.CheckEncodings(full.Msg.Fields, f.Data)
	for _, pr := range problems {
		p.t.Errorf("%s (%s v%d response=%v): encoding: %s", where, full.Msg.APIName, full.Msg.Version, full.Msg.Response, pr)
	}
	p.encodings.Add(counts)
	fullNames, shNames := p.fullNames, p.shNames
	if full.SASLToken { // the pipeline learns from Kafka messages only
		fullNames, shNames = &codec.TopicNames{}, &codec.TopicNames{}
	}
	if d := codec.ShallowDiff(full.Msg, sh.Msg, fullNames, shNames); d != "" {
		p.t.Fatalf("%s (%s v%d response=%v):\n%s", where, full.Msg.APIName, full.Msg.Version, full.Msg.Response, d)
	}
	// A walker that went over the capture's earlier messages gathers what a new walk does.
	if got, want := p.walker.Facts(sh.Msg), sh.Msg.Facts(); !reflect.DeepEqual(got, want) {
		p.t.Fatalf("%s (%s v%d response=%v): facts of a walker reused: %+v, of a new walk: %+v", where, sh.Msg.APIName, sh.Msg.Version, sh.Msg.Response, got, want)
	}
	fn, sn := codec.NodeCount(full.Msg), codec.NodeCount(sh.Msg)
	p.fullNodes, p.shNodes = p.fullNodes+fn, p.shNodes+sn
	p.warnings += len(full.Msg.Warnings)
	if len(full.Msg.Facts().Errors) > 0 {
		p.errorsSet++
	}
	if full.Msg.APIKey == 3 && full.Msg.Response && len(full.Msg.Warnings) == 0 {
		p.metadata++
		p.fullMeta, p.shMeta = p.fullMeta+fn, p.shMeta+sn
		if sn >= fn {
			p.t.Fatalf("%s: Metadata response: the shallow tree has %d nodes, the full one %d", where, sn, fn)
		}
	}
}

func (p *twinPipelines) Notice(reassembly.Notice) {}
func (p *twinPipelines) Close(c *reassembly.Conn) { delete(p.convs, c) }

// TestShallowCaptures decodes every message of every capture in pcaps/ fully and shallowly:
// the results, warnings, facts, topic names, pairing and what the statistics read must be the
// same, and the shallow trees of Metadata responses smaller.
func TestShallowCaptures(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	newCodec := func(shallow bool) *codec.Codec {
		c := codec.New(set)
		c.Records = records.New(records.Options{})
		c.Shallow = shallow
		return c
	}
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng", "*.pcap.gz"} {
		m, _ := filepath.Glob(filepath.Join("..", "pcaps", pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no captures in pcaps/")
	}
	ports, err := capture.ParsePorts([]string{pcaps.Ports})
	if err != nil {
		t.Fatal(err)
	}
	total := &twinPipelines{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p := &twinPipelines{t: t, name: filepath.Base(file), full: newCodec(false), shallow: newCodec(true),
				convs: map[*reassembly.Conn][2]*codec.Conversation{}, fullNames: &codec.TopicNames{}, shNames: &codec.TopicNames{}}
			var keys *tlsdec.KeyLog
			if f, err := os.Open(strings.TrimSuffix(file, filepath.Ext(file)) + ".keylog"); err == nil {
				keys, err = tlsdec.ParseKeyLog(f)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			r, err := capture.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			a := reassembly.New(p, reassembly.Options{
				IsServerPort: ports.Has,
				TLSKeys:      keys,
				Detect:       p.full.DetectRequest,
			})
			for {
				seg, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					if _, ok := err.(*capture.PacketError); ok {
						continue
					}
					t.Fatal(err)
				}
				a.Add(seg)
			}
			a.Close()
			t.Logf("%d messages (%d warnings, %d with errors); nodes: full %d, shallow %d; %d Metadata responses: full %d, shallow %d",
				p.frames, p.warnings, p.errorsSet, p.fullNodes, p.shNodes, p.metadata, p.fullMeta, p.shMeta)
			total.frames += p.frames
			total.metadata += p.metadata
			total.fullNodes += p.fullNodes
			total.shNodes += p.shNodes
			total.encodings.Add(p.encodings)
		})
	}
	t.Logf("encodings checked: %+v", total.encodings)
	if e := total.encodings; !t.Failed() && (e.Prefixed == 0 || e.Nulls == 0 || e.Varints == 0 || e.VarintPrefixes == 0 || e.Decompressed == 0 || e.Bits == 0) {
		t.Errorf("the encodings checks saw too little of the captures: %+v", e)
	}
	t.Logf("all captures: %d messages, %d Metadata responses; nodes: full %d, shallow %d", total.frames, total.metadata, total.fullNodes, total.shNodes)
	if !t.Failed() && (total.frames < 100 || total.metadata == 0) {
		t.Errorf("%d messages, %d Metadata responses: the captures did not go through", total.frames, total.metadata)
	}
}
