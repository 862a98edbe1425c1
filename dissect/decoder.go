package dissect

import (
	"bytes"
	"sync"
	"time"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
	"github.com/kdissect/kdissect/reassembly"
)

// request is what a conversation remembers of a request: where it was seen, and its client id
// (for its response).
type request struct {
	frame    int
	time     time.Time
	clientID *string
}

// eventKind says what a decoder found.
type eventKind uint8

const (
	evStart  eventKind = iota // a connection's first packet appeared
	evEntry                   // a message (or SASL token) was decoded
	evNotice                  // something to report that is not a message
	evClose                   // a connection ended
)

// event is what a decoder hands to the pipeline.
type event struct {
	kind   eventKind
	conn   *reassembly.Conn
	entry  *model.Entry
	notice reassembly.Notice
	// answered: the entry is a response whose request was captured; names: the topic names
	// the entry's message gives topic ids, to be learnt in capture order.
	answered bool
	names    []codec.TopicIDName
	// spilled holds the entry's frame outside the heap (reassembly.Frame.Spilled), to be
	// closed once the entry is shown or dropped.
	spilled *reassembly.Spilled
	// own is the memory of entry and its facts, when they were made together (entryFacts):
	// the pipeline may reuse it once done with the entry (Pipeline.forget).
	own *entryFacts
}

// conn is what a decoder keeps of a connection: its conversation, the responses that came
// before their requests, and its endpoints as shown.
type conn struct {
	cv             *codec.Conversation
	early          codec.Early[reassembly.Frame]
	client, server string
}

// decoder is the decoding half of the pipeline for one assembler: it is the assembler's
// reassembly.Handler, and it hands each finding to emit in the order it makes them.
type decoder struct {
	codec *codec.Codec
	convs map[*reassembly.Conn]*conn
	// facts, expand and lent are the Plan's Facts, Expand and Lend: with lent frames, those
	// held are copied, and entries get neither bytes nor field trees.
	facts, expand, lent bool
	// walker gathers the facts of the assembler's messages, one after another.
	walker codec.FactsWalker
	// namer gives the topic names the assembler's messages teach.
	namer codec.TopicIDNamer
	// arena holds the trees kept for the analyses (Codec.Compact).
	arena codec.Arena
	// entries holds entries the pipeline is done with, for reuse (Pipeline.forget); stores says
	// that it reuses them, and the stores of their facts' lists with them.
	entries *sync.Pool
	stores  bool
	emit    func(event)
	// hold and frame as function values, made once rather than for each connection.
	holdFunc  func(reassembly.Frame) reassembly.Frame
	frameFunc func(reassembly.Frame)
}

// entryFacts is an entry with room for its facts, and a store for their lists when entries are
// reused (decoder.stores): the lists of a later message's facts then take the same memory.
type entryFacts struct {
	e     model.Entry
	f     codec.Facts
	store codec.FactsStore
}

// newDecoder returns a decoder for one assembler that reports to emit.
func (p *Pipeline) newDecoder(emit func(event)) *decoder {
	plan := p.cfg.Plan
	d := &decoder{codec: p.codec, convs: map[*reassembly.Conn]*conn{}, emit: emit,
		facts: plan.Facts, expand: plan.Expand, lent: plan.Lend, entries: &p.entries, stores: p.reuse && p.par == nil}
	d.holdFunc, d.frameFunc = d.hold, d.frame
	return d
}

// Started passes every new connection on, for the pipeline to number it.
func (d *decoder) Started(c *reassembly.Conn) { d.emit(event{kind: evStart, conn: c}) }

func (d *decoder) Open(c *reassembly.Conn) (toServer, toClient reassembly.Checker) {
	cv := d.codec.NewConversation()
	cs := &conn{cv: cv, client: c.Client.String(), server: c.Server.String()}
	cs.early = codec.NewEarly(cv, place, d.holdFunc, d.frameFunc)
	d.convs[c] = cs
	return func(head []byte, synced bool) wire.Verdict { return cv.Check(true, head, synced) },
		func(head []byte, synced bool) wire.Verdict { return cv.Check(false, head, synced) }
}

// place is where a frame is, for pairing's queue of early responses.
func place(f reassembly.Frame) codec.Place {
	return codec.Place{Request: f.Dir == reassembly.ToServer, Data: f.Data, First: f.FirstPacket, Last: f.LastPacket}
}

// hold keeps a frame's bytes while pairing holds it: a lent frame's memory will hold another.
func (d *decoder) hold(f reassembly.Frame) reassembly.Frame {
	if d.lent {
		f.Data = bytes.Clone(f.Data)
		f.Spilled = nil // the framer closes it once the frame is handed over
	}
	return f
}

func endpoints(c *reassembly.Conn, d reassembly.Dir) (string, string) {
	if d == reassembly.ToServer {
		return c.Client.String(), c.Server.String()
	}
	return c.Server.String(), c.Client.String()
}

// Frame takes a frame from reassembly, through pairing's queue of early responses.
func (d *decoder) Frame(f reassembly.Frame) { d.convs[f.Conn].early.Add(f) }

// frame decodes one frame into an entry.
func (d *decoder) frame(f reassembly.Frame) {
	cs := d.convs[f.Conn]
	cv := cs.cv
	e, ef := d.newEntry()
	// Set field by field: e is new (zero), and a whole Entry built then copied in costs more.
	e.Frame, e.FirstFrame, e.Time, e.Bytes, e.TLS = f.LastPacket, f.FirstPacket, f.LastTime, f.Data, f.TLS
	e.Src, e.Dst = cs.client, cs.server
	if f.Dir == reassembly.ToClient {
		e.Src, e.Dst = cs.server, cs.client
	}
	var res codec.Result
	if f.Spilled != nil {
		cv.SetPaged(f.Spilled) // its records' memory goes back as they are decoded and written
		defer cv.SetPaged(nil)
	}
	if f.Dir == reassembly.ToServer {
		e.Request = true
		ref := &request{frame: f.LastPacket, time: f.LastTime}
		res = cv.ClientFrame(f.Data, ref)
		if res.Msg != nil {
			ref.clientID = res.Msg.ClientID
		}
	} else {
		res = cv.ServerFrame(f.Data)
	}
	e.Msg, e.NoResponse, e.Session = res.Msg, res.NoResponse, res.Session
	if e.Msg != nil && !d.lent {
		e.Bytes = e.Msg.Redact(f.Data) // no password in hex dumps
	}
	if res.Request != nil {
		if r, ok := res.Request.Ref.(*request); ok {
			e.RequestFrame, e.Latency, e.ClientID = r.frame, f.LastTime.Sub(r.time), r.clientID
		}
	}
	ev := event{kind: evEntry, conn: f.Conn, entry: e, answered: res.Request != nil, own: ef}
	if f.Spilled != nil && !d.lent {
		ev.spilled = f.Spilled // mapped until the pipeline is done with the entry
	}
	if e.Msg != nil && d.facts {
		d.gather(ef)
	}
	if e.Msg != nil && !res.SASLToken {
		ev.names = d.namer.TopicIDNames(e.Msg)
	}
	if d.lent {
		// Nothing after this reads the tree, and the frame's memory will hold another frame:
		// the entry keeps neither, and the next messages' trees may use the nodes. What the
		// entry keeps are copies.
		e.Bytes = nil
		if e.Msg != nil && !d.codec.Keeps(e.Msg) {
			// A tree with fields that analyses read (Codec.Keep) is left to them; the
			// pipeline releases it once they have (Pipeline.unhold). Its numbers and strings
			// are copies, its bytes values are not (analyses copy what they keep of them).
			d.codec.Release(e.Msg)
		} else if e.Msg != nil {
			d.codec.Compact(e.Msg, &d.arena)
		}
	}
	d.emit(ev)
}

// newEntry returns a zero entry, with room for its facts (ef) when the plan wants them.
func (d *decoder) newEntry() (e *model.Entry, ef *entryFacts) {
	if !d.facts {
		return new(model.Entry), nil
	}
	// One allocation for the two rather than two: an entry's facts live as long as it does.
	// One the pipeline is done with serves again: Pipeline.forget cleared its entry and facts,
	// and emptied its store.
	ef, _ = d.entries.Get().(*entryFacts)
	if ef == nil {
		ef = new(entryFacts)
	}
	return &ef.e, ef
}

// gather gathers the facts of ef's message (a raw SASL token's too: its user).
func (d *decoder) gather(ef *entryFacts) {
	e := &ef.e
	if d.expand {
		e.Msg.Expand()
	}
	if d.stores {
		ef.f = d.walker.FactsIn(e.Msg, &ef.store)
	} else {
		ef.f = d.walker.Facts(e.Msg)
	}
	e.Facts = &ef.f
}

func (d *decoder) Notice(n reassembly.Notice) {
	d.emit(event{kind: evNotice, conn: n.Conn, notice: n})
}

func (d *decoder) Close(c *reassembly.Conn) {
	d.convs[c].early.Close()
	delete(d.convs, c)
	d.emit(event{kind: evClose, conn: c})
}
