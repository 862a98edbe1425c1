package dissect

import (
	"math"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/reassembly"
)

// Spreading a capture file over the cores: the reading goroutine hands each TCP segment to one
// of Config.Workers shards, chosen by a hash of the connection's addresses and ports that is the
// same in both directions, so that a connection's packets all reach the same shard. Each shard
// has its own assembler and decoder. Segments travel in rounds of up to roundPackets, cut at
// the same packet for every shard; the merging goroutine takes each round from every shard and
// merges their events by the packet that caused them, which gives the order one assembler would
// have given. The capture clock is the reader's: it tells every shard when to flush, at the
// packet where a single assembler would have flushed.

const (
	// roundPackets is how many segments, over all shards, make a round.
	roundPackets = 256
	// roundPayload is the payload bytes a round holds, over all shards, before it is cut.
	roundPayload = 256 << 10
	// roundsInFlight bounds the rounds read but not yet shown, and so the memory in flight.
	// Rounds whose messages lend their trees (Plan.Lend) hold little beyond their segments:
	// more of them let a shard that met a run of big messages fall behind the other without
	// holding it up (two cores stood idle 7% of a summary with 3, 3% with 8).
	roundsInFlight, lentRoundsInFlight = 3, 8
)

// inFlight is how many rounds may be read and not yet shown.
func (p *Pipeline) inFlight() int {
	if p.cfg.Plan.Lend {
		return lentRoundsInFlight
	}
	return roundsInFlight
}

// shard is one assembler with its decoder, fed by a goroutine of its own.
type shard struct {
	asm     *reassembly.Assembler
	in, out chan *round
	// r is the round being worked on; pkt and phase are the key of the events being made.
	r     *round
	pkt   int
	phase uint8
	// seg and tcp are the segment given to the assembler, made again for each from the round.
	seg capture.Segment
	tcp layers.TCP
}

// round is one shard's part of a round: copies of its segments in, its events out.
type round struct {
	segs []roundSeg
	// raw holds each segment's TCP header and payload, one after another. The shard decodes
	// the TCP headers again from these copies: the reader's own decoding points into memory
	// it reuses.
	raw []byte
	// flushes and start are the same for every shard of a round.
	flushes []flushPoint
	start   time.Time
	// last: close the assembler after the segments (the end of the file).
	last   bool
	events []keyedEvent
}

// flushPoint says that the capture clock reached t at packet pkt.
type flushPoint struct {
	pkt int
	t   time.Time
}

// keyedEvent is an event with the packet that caused it, and whether it came while the packet
// was assembled (phase 0), at the flush after it (1) or at the end of the file (2).
type keyedEvent struct {
	pkt   int
	phase uint8
	ev    event
}

func (k *keyedEvent) before(o *keyedEvent) bool {
	return k.pkt < o.pkt || k.pkt == o.pkt && k.phase < o.phase
}

// tcpHeaderLen is the length of a TCP header without options.
const tcpHeaderLen = 20

// roundSeg is what a round keeps of a segment besides its bytes. It holds no pointer (a
// capture.Segment does), so that copying it into the round costs no write barrier.
type roundSeg struct {
	num                            int
	sec                            int64 // capture time (UTC, as the reader gives it)
	nsec                           int32
	capLen, length, iface, missing int
	linkType                       layers.LinkType
	truncated                      bool
	net                            gopacket.Flow
	end                            int // where the segment's bytes end in raw
}

// add copies a segment into the round; the reader reuses the segment's memory. The TCP header
// is copied without its options, its data offset set to say so: nothing after the reader reads
// them, and a shard then decodes 20 bytes rather than a list of options for every segment.
func (r *round) add(seg *capture.Segment) {
	h := seg.TCP.Contents
	if len(h) > tcpHeaderLen {
		l := len(r.raw)
		r.raw = append(r.raw, h[:tcpHeaderLen]...)
		r.raw[l+12] = tcpHeaderLen/4<<4 | h[12]&0x0f // the data offset, in words; the low bits are flags
	} else {
		r.raw = append(r.raw, h...)
	}
	r.raw = append(r.raw, seg.TCP.Payload...)
	t := seg.Info.Timestamp
	r.segs = append(r.segs, roundSeg{num: seg.Num, sec: t.Unix(), nsec: int32(t.Nanosecond()),
		capLen: seg.Info.CaptureLength, length: seg.Info.Length, iface: seg.Info.InterfaceIndex,
		missing: seg.Missing, linkType: seg.LinkType, truncated: seg.Truncated, net: seg.Net, end: len(r.raw)})
}

// segment makes segment i of the round again, its TCP header decoded from its copy into tcp.
// A header that decoded once decodes again; should one not, segment returns false.
func (r *round) segment(i int, seg *capture.Segment, tcp *layers.TCP) bool {
	s := &r.segs[i]
	start := 0
	if i > 0 {
		start = r.segs[i-1].end
	}
	if tcp.DecodeFromBytes(r.raw[start:s.end], gopacket.NilDecodeFeedback) != nil {
		return false
	}
	*seg = capture.Segment{Num: s.num, LinkType: s.linkType, Net: s.net, TCP: tcp, Truncated: s.truncated, Missing: s.missing,
		Info: gopacket.CaptureInfo{Timestamp: time.Unix(s.sec, int64(s.nsec)).UTC(), CaptureLength: s.capLen, Length: s.length, InterfaceIndex: s.iface}}
	return true
}

func (r *round) reset() {
	clear(r.events)
	if cap(r.raw) > 4*roundPayload {
		r.raw = nil // after a giant segment
	}
	r.segs, r.raw, r.events = r.segs[:0], r.raw[:0], r.events[:0]
	r.flushes, r.last, r.start = nil, false, time.Time{}
}

// shardOf picks a segment's shard: the same for both directions of a connection.
func shardOf(seg *capture.Segment, n int) int {
	h := seg.Net.FastHash() ^ uint64(seg.TCP.SrcPort^seg.TCP.DstPort)*0x9e3779b97f4a7c15
	h ^= h >> 32
	return int(h % uint64(n))
}

// run assembles the shard's rounds as they come.
func (sh *shard) run() {
	for r := range sh.in {
		sh.r = r
		f := 0
		for i := range r.segs {
			num := r.segs[i].num
			for ; f < len(r.flushes) && r.flushes[f].pkt < num; f++ {
				sh.flush(r.flushes[f])
			}
			if !r.segment(i, &sh.seg, &sh.tcp) {
				continue
			}
			sh.pkt, sh.phase = num, 0
			sh.asm.Add(&sh.seg)
		}
		for ; f < len(r.flushes); f++ {
			sh.flush(r.flushes[f])
		}
		if r.last {
			sh.pkt, sh.phase = math.MaxInt, 2
			sh.asm.Close()
		}
		sh.out <- r
	}
}

func (sh *shard) flush(f flushPoint) {
	sh.pkt, sh.phase = f.pkt, 1
	sh.asm.Flush(f.t)
}

func (sh *shard) record(ev event) {
	sh.r.events = append(sh.r.events, keyedEvent{pkt: sh.pkt, phase: sh.phase, ev: ev})
}

// startShards starts Config.Workers shards. The bounds one assembler would have, on its pages
// and on its open connections, are split between them: each shard holding DefaultMaxConns
// would keep Workers times the connections a single assembler keeps open, and their memory.
// A shard's part of the connections (by a hash of their addresses) is uneven, so one may
// close some while the others together keep fewer than the bound.
func (p *Pipeline) startShards() []*shard {
	opt := p.options()
	opt.MaxPagesTotal = max(1024, reassembly.DefaultMaxPagesTotal/p.cfg.Workers)
	opt.MaxConns = max(64, reassembly.DefaultMaxConns/p.cfg.Workers)
	shards := make([]*shard, p.cfg.Workers)
	for i := range shards {
		sh := &shard{in: make(chan *round, p.inFlight()), out: make(chan *round, p.inFlight())}
		sh.asm = reassembly.New(p.newDecoder(sh.record), opt)
		shards[i] = sh
		go sh.run()
	}
	return shards
}

// sharded is Read for a capture file, spread over Config.Workers shards.
func (p *Pipeline) sharded(r *capture.Reader, name string) (packets int, err error) {
	shards := p.startShards()
	// slots bounds the rounds in flight; free brings rounds back from the merger for reuse. It
	// has room for every round there can be, so that none is dropped and made again.
	slots := make(chan struct{}, p.inFlight())
	free := make(chan []*round, p.inFlight()+1)
	done := make(chan struct{})
	p.par = p.newWriters()
	go func() {
		p.merge(shards, slots, free)
		close(done)
	}()

	take := func() []*round {
		select {
		case set := <-free:
			return set
		default:
			// Each shard's part starts with room for an even share of a round, and more:
			// growing it by doubling would copy it over and over.
			set := make([]*round, len(shards))
			for i := range set {
				set[i] = &round{raw: make([]byte, 0, 2*roundPayload/len(shards)), segs: make([]roundSeg, 0, 2*roundPackets/len(shards))}
			}
			return set
		}
	}
	cur, count, bytes := take(), 0, 0
	perRound := roundPackets
	if p.cfg.RoundPackets > 0 {
		perRound = p.cfg.RoundPackets
	}
	var flushes []flushPoint
	var start time.Time
	var clock reassembly.FlushClock
	send := func(last bool) {
		slots <- struct{}{}
		for i, sh := range shards {
			cur[i].flushes, cur[i].start, cur[i].last = flushes, start, last
			sh.in <- cur[i]
		}
		cur, count, bytes, flushes, start = nil, 0, 0, nil, time.Time{}
		if !last {
			cur = take()
		}
	}
	packets, err = p.readSegments(r, name, r.Next, func(seg *capture.Segment) {
		w := shardOf(seg, len(shards))
		t := seg.Info.Timestamp
		if count == 0 {
			start = t
		}
		cur[w].add(seg)
		count++
		bytes += len(seg.TCP.Payload)
		if clock.Due(t) {
			flushes = append(flushes, flushPoint{pkt: seg.Num, t: t})
		}
		if count >= perRound || bytes >= roundPayload {
			send(false)
		}
	})
	send(true)
	<-done
	p.stopWriters()
	for _, sh := range shards {
		close(sh.in)
	}
	return packets, err
}

// merge shows the shards' events in capture order, round by round, until the last round.
func (p *Pipeline) merge(shards []*shard, slots <-chan struct{}, free chan<- []*round) {
	next := make([]int, len(shards))
	for {
		set := make([]*round, len(shards))
		for i, sh := range shards {
			set[i] = <-sh.out
		}
		if !set[0].start.IsZero() {
			p.setStart(set[0].start)
		}
		clear(next)
		var batch []event
		var batchKey *keyedEvent
		for {
			best := -1
			for i, r := range set {
				if next[i] < len(r.events) && (best < 0 || r.events[next[i]].before(&set[best].events[next[best]])) {
					best = i
				}
			}
			if batchKey != nil && (best < 0 || batchKey.before(&set[best].events[next[best]])) {
				p.handleBatch(batch)
				batch, batchKey = batch[:0], nil
			}
			if best < 0 {
				break
			}
			k := &set[best].events[next[best]]
			next[best]++
			if k.phase == 0 {
				p.handle(k.ev)
				continue
			}
			// A flush, or the end of the file: the shards' events are shown as one batch.
			batch, batchKey = append(batch, k.ev), k
		}
		last := set[0].last
		for _, r := range set {
			r.reset()
		}
		select {
		case free <- set:
		default:
		}
		<-slots
		if last {
			return
		}
	}
}
