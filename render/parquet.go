package render

import (
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/internal/pieces"
	"github.com/kdissect/kdissect/model"
)

// Parquet writes one row per message (and per notice) to a Parquet file: the JSON line's
// top-level names as typed columns, the message's facts as typed columns, and its field tree
// as a JSON column (docs/parquet.md). Rows go out a row group at a time, so that memory stays
// bounded whatever the capture's size.
//
// Messages are made into rows as they come, a batch at a time, with their facts; the field
// trees are written by goroutines of the renderer's own, one batch each and several batches at
// once (the JSON of the trees, with the records that are decoded only then, is most of the
// work), and one more goroutine hands the batches in order to parquet-go, which encodes and
// compresses them. So the goroutine showing messages, which every message passes through, does
// little more than for a summary line. A big message (over ParquetHoldsUpTo) is the exception:
// its field tree is written at once, so that its frame may be kept outside the heap and let go
// once Message returns, as JSON lines do, and one such tree at a time waits to be written.
// Trees of messages over parquetStreamOver, the big ones too, are compressed as they are
// written, into pages of their own (treePage).
type Parquet struct {
	w *parquet.GenericWriter[parquetRow]
	// cur is the batch being filled. Full batches go to build, for a builder to write their
	// field trees, and to order, from which the writing goroutine takes them in the order
	// they were filled; it gives them back through free and says on done how the writing
	// ended.
	cur                *rowBatch
	build, order, free chan *rowBatch
	done               chan error
	// err is the first error writing the file; closed is Close's result, once closed.
	mu     sync.Mutex
	err    error
	closed *error
	// tree: write the field tree (Options.NoTree leaves it out); file names the capture in
	// every row; software is each connection's client software, once its ApiVersions
	// request named it.
	tree     bool
	file     string
	software map[int]string
	// group writes the rows a row group at a time (the writing goroutine's).
	group *groupWriter
	// codec compresses the pages. now writes big messages' field trees, on the goroutine
	// showing messages, compressed by compress (on a goroutine of its own), made at the
	// first; bigTurn holds a token while the tree it wrote waits to be written. spare holds
	// pieces for compressed trees.
	codec    pageCodec
	now      fieldWriter
	compress *treeCompressor
	bigTurn  chan struct{}
	spare    *pieces.Pool
	// value holds a fact's value while its column is filled.
	value model.Value
}

// rowBatch is rows not yet handed to the writer: they keep their lists from one batch to the
// next. msgs are the messages whose field trees (and warnings, which come with the records
// decoded for the tree) the rows are still to get; frames counts their bytes. fields holds
// the JSON text of the field trees, pages the compressed trees of big ones (treePage); built
// says when they are written, err how writing them failed. bigAt, when not 0, is the row
// (counted from 1) whose field tree was written at once (Parquet.bigTurn): the batch's last.
type rowBatch struct {
	rows   []parquetRow
	msgs   []*codec.Message
	n      int
	frames int
	fields []byte
	pages  []treePage
	built  chan struct{}
	err    error
	bigAt  int
}

// parquetBatch is how many rows are collected before they are handed on, unless their
// messages' frames take parquetBatchFrames first (their field trees' JSON is a few times
// that); there are as many batches as builders and two more: one filled, one written. The
// messages of the batches, decoded and waiting for their trees, are a good part of the heap:
// with 32 KiB of frames a batch rather than 128, the 210 MB benchmark capture is written with
// a fifth fewer collections.
const (
	parquetBatch       = 256
	parquetBatchFrames = 32 << 10
)

// parquetBatchKeep is the most bytes of field trees a batch keeps room for once written.
const parquetBatchKeep = 4 << 20

// parquetBuilders is the most goroutines writing field trees at once.
const parquetBuilders = 4

// ParquetHoldsUpTo is the size of the biggest message (codec.Message.Size) whose entry Parquet
// reads after Message returns (Needs.HoldsUpTo): the field trees of bigger ones are written at
// once. Above it, frames are few and big (a consumer's Fetch responses of megabytes), each kept
// outside the heap by the pipeline (dissect.Plan.SpillOver), and their field trees' JSON is
// three or four times the frame: a few of them in the batches would be most of the memory.
const ParquetHoldsUpTo = 1 << 20

// ParquetHeapLimit is the soft heap limit of a run writing Parquet with field trees: trees
// over a page are compressed as they are written (treePage), and the rows wait in row groups
// of a few MiB, so that the heap holds 30 to 35 MiB once collected, 10 more than JSON lines.
// On a capture of Fetch responses of up to 9 MB: 88 MB peak RSS (60 MiB: 84 MB, 72 MiB: 95
// MB); on the 210 MB benchmark capture, 82 MB, with 84 collections where 60 MiB makes 100 and
// JSON lines 47.
const ParquetHeapLimit = 64 << 20

// ParquetRowGroupRows is the most rows a row group holds: large enough for readers to scan
// fast (a few MiB per column), small enough that the writer holds little.
const ParquetRowGroupRows = 64 << 10

// parquetPageBytes is the size of a page before compression: each column holds one while it
// fills.
const parquetPageBytes = 256 << 10

// parquetRowGroupBytes ends a row group early when its columns and compressed trees, held
// until it ends and then held once more as the file parquet-go copies (groupWriter), grow
// past it (large field trees).
const parquetRowGroupBytes = 4 << 20

// parquetRow is one row. The columns are named as in the JSON lines where JSON has the name;
// pointers are the columns that may be null, pointing at the row's own values (lower case).
// The columns from topics to sasl_user, but client_software (the connection's), are those of
// model.Facts, found by name and filled by the facts' kinds (Parquet.facts): a text fact is
// an optional string, a count an int64, a list a []string, error codes a []int16.
type parquetRow struct {
	File          string  `parquet:"file,dict"`
	Frame         int64   `parquet:"frame"`
	FirstFrame    *int64  `parquet:"first_frame"`
	Time          int64   `parquet:"time,timestamp(microsecond:utc)"`
	TimeNs        int64   `parquet:"time_ns"`
	Stream        int32   `parquet:"stream"`
	Src           string  `parquet:"src,dict"`
	Dst           string  `parquet:"dst,dict"`
	Kind          string  `parquet:"kind,dict"`
	APIKey        *int16  `parquet:"api_key"`
	APIName       *string `parquet:"api_name,dict"`
	APIVersion    *int16  `parquet:"api_version"`
	CorrelationID *int32  `parquet:"correlation_id"`
	ClientID      *string `parquet:"client_id,dict"`
	Size          *int32  `parquet:"size"`
	RequestFrame  *int64  `parquet:"request_frame"`
	LatencyUs     *int64  `parquet:"latency_us"`
	NoResponse    bool    `parquet:"no_response"`
	TLS           *string `parquet:"tls,dict"`
	Text          *string `parquet:"text"`

	Topics         []string         `parquet:"topics,list"`
	TopicIDs       []string         `parquet:"topic_ids,list"`
	Partitions     []partitionRow   `parquet:"partitions,list"`
	Groups         []string         `parquet:"groups,list"`
	Members        []string         `parquet:"members,list"`
	ErrorCodes     []int16          `parquet:"error_codes,list"`
	ErrorNames     []string         `parquet:"error_names,list"`
	Records        int64            `parquet:"records"`
	ControlRecords int64            `parquet:"control_records"`
	RecordsBytes   int64            `parquet:"records_bytes"`
	Codecs         []string         `parquet:"codecs,list"`
	RecordSets     []recordSetRow   `parquet:"record_sets,list"`
	ClientSoftware *string          `parquet:"client_software,dict"`
	Txn            string           `parquet:"txn,optional,dict"`
	Coordinators   []coordinatorRow `parquet:"coordinators,list"`
	SASLMechanism  string           `parquet:"sasl_mechanism,optional,dict"`
	SASLUser       string           `parquet:"sasl_user,optional,dict"`
	Warnings       []string         `parquet:"warnings,list"`
	Fields         []byte           `parquet:"fields,optional,string"`

	apiKey, apiVersion           int16
	corr, size                   int32
	firstFrame                   int64
	requestFrame, latency        int64
	apiName, clientID, tls, text string
	software                     string
}

// partitionRow is one partition a message names.
type partitionRow struct {
	Topic     string `parquet:"topic"`
	Partition int32  `parquet:"partition"`
}

// recordSetRow counts the records of one records field.
type recordSetRow struct {
	Topic          string   `parquet:"topic"`
	Partition      int32    `parquet:"partition"`
	Records        int64    `parquet:"records"`
	ControlRecords int64    `parquet:"control_records"`
	Bytes          int64    `parquet:"bytes"`
	Codecs         []string `parquet:"codecs,list"`
}

// coordinatorRow is one answer of a FindCoordinator response.
type coordinatorRow struct {
	Key       string `parquet:"key"`
	NodeID    int32  `parquet:"node_id"`
	Host      string `parquet:"host"`
	Port      int32  `parquet:"port"`
	ErrorCode int16  `parquet:"error_code"`
}

// NewParquet writes a Parquet file to w, its pages compressed with the codec named (one of
// ParquetCompressions; "": the default); without tree, the fields column is null. A codec that
// does not exist fails the writing: its error comes back once rows are handed on, or at Close.
func NewParquet(w io.Writer, tree bool, compression string) *Parquet {
	builders := 1
	if tree {
		builders = min(runtime.GOMAXPROCS(0), parquetBuilders)
	}
	batches := builders + 2
	p := &Parquet{tree: tree, software: map[int]string{}, build: make(chan *rowBatch, batches),
		order: make(chan *rowBatch, batches), free: make(chan *rowBatch, batches), done: make(chan error, 1),
		now: fieldWriter{str: NewJSON(io.Discard)}, bigTurn: make(chan struct{}, 1), spare: pieces.NewPool(parquetPieceBytes, parquetSpare)}
	for range batches {
		p.free <- &rowBatch{rows: make([]parquetRow, parquetBatch), msgs: make([]*codec.Message, parquetBatch),
			built: make(chan struct{}, 1)}
	}
	p.cur = <-p.free
	codec, err := newPageCodec(compression)
	if err != nil {
		p.err, codec = err, snappyCodec{}
	}
	p.codec = codec
	options := parquetOptions(codec)
	p.w = parquet.NewGenericWriter[parquetRow](writeOnly{w}, options...)
	p.group = newGroupWriter(p.w, codec, p.spare, options)
	for range builders {
		go buildFields(p.build, codec, p.spare)
	}
	go p.writeBatches()
	return p
}

// writeOnly hides all but Write of the output from parquet-go: copying a row group's pages
// (groupWriter), its buffered writer would otherwise hand each column's copy to the file's
// ReadFrom, which tries the kernel's copies first and then copies through a buffer of its own
// each time.
type writeOnly struct{ w io.Writer }

func (o writeOnly) Write(b []byte) (int, error) { return o.w.Write(b) }

// parquetOptions are the writer's, its pages compressed by codec.
func parquetOptions(codec pageCodec) []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.MaxRowsPerRowGroup(ParquetRowGroupRows),
		parquet.PageBufferSize(parquetPageBytes),
		// Bounds of the field trees' JSON would be whole values copied into every page
		// header and column index (half of a file's bytes) and mean nothing to a query.
		parquet.SkipPageBounds("fields"), parquet.SkipPageStatistics("fields"),
		parquet.CreatedBy("kdissect", "", ""),
	}
}

func newParquet(w io.Writer, o Options) Renderer {
	p := NewParquet(w, !o.NoTree, o.Compression)
	p.file = o.File
	return p
}

// File says that the rows that follow come from the named capture file.
func (p *Parquet) File(name string) error {
	p.file = name
	return nil
}

// next returns the next row to fill, its lists emptied.
func (p *Parquet) next() *parquetRow {
	b := p.cur
	r := &b.rows[b.n]
	b.n++
	*r = parquetRow{Topics: r.Topics[:0], TopicIDs: r.TopicIDs[:0], Partitions: r.Partitions[:0], Groups: r.Groups[:0],
		Members: r.Members[:0], ErrorCodes: r.ErrorCodes[:0], ErrorNames: r.ErrorNames[:0], Codecs: r.Codecs[:0],
		RecordSets: r.RecordSets[:0], Coordinators: r.Coordinators[:0], Warnings: r.Warnings[:0]}
	r.File = p.file
	return r
}

// setTime sets the row's time: to the microsecond in time, a timestamp of the kind every
// engine reads as one (Spark reads no nanosecond timestamp), cut down rather than rounded so
// that it never comes after the packet; and to the nanosecond, as the JSON time has it, in
// time_ns.
func (r *parquetRow) setTime(t time.Time) {
	r.TimeNs = t.UnixNano()
	r.Time = r.TimeNs / 1000
	if r.TimeNs%1000 < 0 {
		r.Time--
	}
}

// Message adds a row.
func (p *Parquet) Message(e *model.Entry) error {
	m := e.Msg
	big := p.tree && m.Size > ParquetHoldsUpTo
	r := p.next()
	r.Frame, r.firstFrame, r.Stream = int64(e.Frame), int64(e.FirstFrame), int32(e.Stream)
	r.setTime(e.Time)
	r.FirstFrame = &r.firstFrame
	r.Src, r.Dst = e.Src, e.Dst
	if e.TLS != "" {
		r.tls = e.TLS
		r.TLS = &r.tls
	}
	r.Kind = "request"
	if m.Response {
		r.Kind = "response"
	}
	if m.APIKey >= 0 {
		r.apiKey, r.apiVersion = m.APIKey, m.Version
		r.APIKey, r.APIVersion = &r.apiKey, &r.apiVersion
	}
	if m.APIName != "" {
		r.apiName = m.APIName
		r.APIName = &r.apiName
	}
	r.corr, r.size = m.CorrelationID, int32(m.Size)
	r.CorrelationID, r.Size = &r.corr, &r.size
	if id := clientID(e); id != nil {
		r.clientID = *id
		r.ClientID = &r.clientID
	}
	if m.Response && e.RequestFrame > 0 {
		r.requestFrame, r.latency = int64(e.RequestFrame), e.Latency.Microseconds()
		r.RequestFrame, r.LatencyUs = &r.requestFrame, &r.latency
	}
	r.NoResponse = e.NoResponse
	if f := e.Facts; f != nil {
		p.facts(r, f)
		if f.Software != "" {
			p.software[e.Stream] = f.Software
		}
	}
	if s, ok := p.software[e.Stream]; ok {
		r.software = s
		r.ClientSoftware = &r.software
	}
	switch {
	case big:
		// Written now: the entry is let go of on return. The tree waits for the last one to
		// be written, so that one at most is held.
		if err := p.bigTree(m); err != nil {
			return fmt.Errorf("frame %d: %w", e.Frame, err)
		}
		warnings(r, m)
	case p.tree:
		// The builder writes the field tree, then the warnings: its records' come with them.
		b := p.cur
		b.msgs[b.n-1] = m
		b.frames += m.Size
	default:
		warnings(r, m)
	}
	return p.written()
}

// bigTree compresses the field tree of a big message, the batch's last row, once the last one
// is written.
func (p *Parquet) bigTree(m *codec.Message) error {
	p.bigTurn <- struct{}{}
	if p.compress == nil {
		c, err := newTreeCompressor(p.codec, p.spare, true)
		if err != nil {
			<-p.bigTurn
			return err
		}
		p.compress = c
	}
	page, err := p.compress.compress(&p.now, m)
	if err != nil {
		<-p.bigTurn
		return err
	}
	b := p.cur
	page.row, b.bigAt = b.n-1, b.n
	b.pages = append(b.pages, page)
	return nil
}

// warnings fills the warnings column.
func warnings(r *parquetRow, m *codec.Message) {
	for _, w := range m.Warnings {
		r.Warnings = append(r.Warnings, w.String())
	}
}

// clientID is the client id of a request, or of the request a response answers: a pair's
// rows say whose they are.
func clientID(e *model.Entry) *string {
	if e.Msg.Response {
		return e.ClientID
	}
	return e.Msg.ClientID
}

// facts fills the columns of a message's facts: the column of each fact of model.Facts.
func (p *Parquet) facts(r *parquetRow, f *codec.Facts) {
	row := reflect.ValueOf(r).Elem()
	facts := model.Facts()
	for i := range facts {
		fact := &facts[i]
		col := row.Field(parquetFactColumns[i])
		v := &p.value
		v.Reset()
		switch fact.Kind {
		case model.FactList:
			l := col.Addr().Interface().(*[]string)
			v.List = (*l)[:0]
			fact.Add(v, f)
			*l = v.List
			continue
		case model.FactCodes:
			l := col.Addr().Interface().(*[]int16)
			v.Codes = (*l)[:0]
			fact.Add(v, f)
			*l = v.Codes
			continue
		}
		fact.Add(v, f)
		switch fact.Kind {
		case model.FactText:
			col.SetString(v.Text)
		case model.FactCount:
			col.SetInt(v.Count)
		case model.FactPartitions:
			for _, x := range v.Partitions {
				r.Partitions = append(r.Partitions, partitionRow{Topic: x.Topic, Partition: x.Partition})
			}
		case model.FactRecordSets:
			for _, x := range v.RecordSets {
				r.RecordSets = append(r.RecordSets, recordSetRow{Topic: x.Topic, Partition: x.Partition, Records: x.Records,
					ControlRecords: x.Control, Bytes: x.Bytes, Codecs: x.Codecs})
			}
		case model.FactCoordinators:
			for _, x := range v.Coordinators {
				r.Coordinators = append(r.Coordinators, coordinatorRow{Key: x.Key, NodeID: x.NodeID, Host: x.Host,
					Port: x.Port, ErrorCode: x.ErrorCode})
			}
		}
	}
}

// parquetFactColumns holds, for each fact of model.Facts, the index of its column among the
// fields of parquetRow. Never written once made.
var parquetFactColumns = func() []int {
	t := reflect.TypeFor[parquetRow]()
	var out []int
	for _, fact := range model.Facts() {
		i := 0
		for i < t.NumField() && strings.Split(t.Field(i).Tag.Get("parquet"), ",")[0] != fact.ColumnName() {
			i++
		}
		if i == t.NumField() {
			panic("render: no Parquet column for the fact " + fact.Name) // TestFactsEverywhere says which
		}
		out = append(out, i)
	}
	return out
}()

// Notice adds a row of kind "notice", as the JSON lines have.
func (p *Parquet) Notice(n *model.Notice) error {
	r := p.next()
	r.Frame, r.Stream = int64(n.Frame), int32(n.Stream)
	r.setTime(n.Time)
	r.Src, r.Dst, r.Kind = n.Src, n.Dst, "notice"
	r.text = n.Text
	r.Text = &r.text
	return p.written()
}

// written hands the batch on once it is full, or ends with a big row.
func (p *Parquet) written() error {
	b := p.cur
	if b.n < len(b.rows) && b.frames < parquetBatchFrames && b.bigAt == 0 {
		return nil
	}
	return p.handOn()
}

// handOn hands the batch being filled to a builder and to the writing goroutine, and takes a
// free one. Once the writing has failed, the error comes back at Close.
func (p *Parquet) handOn() error {
	if err := p.failure(); err != nil {
		return err
	}
	p.send()
	p.cur = <-p.free
	return nil
}

// send hands the batch being filled on.
func (p *Parquet) send() {
	p.build <- p.cur
	p.order <- p.cur
}

// failure is the first error writing the file, if any yet.
func (p *Parquet) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// buildFields writes the field trees of the batches that come through build, until it is
// closed, and says on each batch's built when they are written; big ones are compressed with
// codec into pieces from spare.
func buildFields(build <-chan *rowBatch, codec pageCodec, spare *pieces.Pool) {
	f := fieldWriter{str: NewJSON(io.Discard), codec: codec, spare: spare}
	for b := range build {
		b.err = f.batch(b)
		b.built <- struct{}{}
	}
}

// writeBatches writes the batches that come through order once they are built, until it is
// closed; it says on done how the writing ended.
func (p *Parquet) writeBatches() {
	err := p.failure() // a codec that does not exist
	for b := range p.order {
		<-b.built
		if err == nil {
			err = b.err
			if err == nil {
				err = p.group.write(b.rows[:b.n], b.pages)
			}
			if err != nil {
				p.mu.Lock()
				p.err = err
				p.mu.Unlock()
			}
		}
		for i := range b.rows[:b.n] {
			b.rows[i].Fields = nil
		}
		if cap(b.fields) > parquetBatchKeep {
			b.fields = nil // a big message's: not kept for the batches of small ones
		}
		if b.bigAt > 0 {
			<-p.bigTurn
		}
		clear(b.pages)
		b.n, b.frames, b.fields, b.pages, b.bigAt, b.err = 0, 0, b.fields[:0], b.pages[:0], 0, nil
		p.free <- b
	}
	if err == nil {
		err = p.group.end()
	}
	if err == nil {
		err = p.w.Close()
	}
	p.done <- err
}

// pageRun returns how many of rows go to parquet-go together: those whose field trees fit in a
// page. A tree bigger than a page shares its page with a neighbour (a tree before it, else
// one after it): parquet-go copies a page of one value whole once more (its offsets are not
// taken as ordered), tens of MB for a big tree.
func pageRun(rows []parquetRow) int {
	n, size, values, big := 0, 0, 0, false
	for n < len(rows) {
		next := len(rows[n].Fields)
		if n > 0 && size+next > parquetPageBytes {
			joins := next > parquetPageBytes && !big // a big tree joins the rows before it
			takes := big && values < 2               // or takes the next tree with it
			if !joins && !takes {
				break
			}
		}
		size += next
		if rows[n].Fields != nil {
			values++
		}
		big = big || next > parquetPageBytes
		n++
	}
	return n
}

// Flush hands on the rows collected so far; the file is readable only once closed.
func (p *Parquet) Flush() error {
	if p.cur.n == 0 {
		return nil
	}
	return p.handOn()
}

// Close writes the last rows and the file's footer, and returns the first error writing the
// file.
func (p *Parquet) Close() error {
	if p.closed != nil {
		return *p.closed
	}
	if p.cur.n > 0 {
		p.send()
	}
	close(p.build)
	close(p.order)
	err := <-p.done
	if p.compress != nil {
		p.compress.stop()
	}
	p.closed = &err
	return err
}

// fieldWriter writes the field trees of a batch's messages as JSON objects; each builder has
// its own.
type fieldWriter struct {
	// str encodes JSON values, as the JSON lines do.
	str *JSON
	// msg is the message being written; scratch holds the nodes of the batch of its records
	// being written, decoded only for that (codec.Message.EachRecord).
	msg     *codec.Message
	scratch codec.Nodes
	// out, when set, takes the JSON as it is written, parquetTreeChunk bytes at a time (a big
	// tree, compressed as it comes: treeCompressor); err is its first error. compress, made
	// at the first big tree, compresses them with codec into pieces from spare.
	out      io.Writer
	err      error
	compress *treeCompressor
	codec    pageCodec
	spare    *pieces.Pool
}

// parquetTreeChunk is about how many bytes of a tree written to fieldWriter.out are held
// before they are handed on.
const parquetTreeChunk = 64 << 10

// spill hands b to out once it holds parquetTreeChunk bytes, and returns what b is to hold
// then: only ever between values, so that the tree's JSON is held a chunk at a time.
func (f *fieldWriter) spill(b []byte) []byte {
	if f.out == nil || len(b) < parquetTreeChunk {
		return b
	}
	if _, err := f.out.Write(b); err != nil && f.err == nil {
		f.err = err
	}
	return b[:0]
}

// batch writes the field trees and the warnings of the messages of b: those of messages over
// parquetStreamOver compressed into pages of their own.
func (f *fieldWriter) batch(b *rowBatch) error {
	var err error
	for i, m := range b.msgs[:b.n] {
		if m == nil {
			continue
		}
		b.msgs[i] = nil
		r := &b.rows[i]
		if m.Size <= parquetStreamOver {
			start := len(b.fields)
			b.fields = f.tree(b.fields, m)
			r.Fields = b.fields[start:len(b.fields):len(b.fields)]
		} else if err == nil {
			if f.compress == nil {
				if f.compress, err = newTreeCompressor(f.codec, f.spare, false); err != nil {
					continue
				}
			}
			var page treePage
			page, err = f.compress.compress(f, m)
			page.row = i
			b.pages = append(b.pages, page)
		}
		warnings(r, m)
	}
	return err
}

// tree appends the JSON object of a message's field tree: its fields but the header's.
func (f *fieldWriter) tree(b []byte, m *codec.Message) []byte {
	f.msg = m
	b = f.object(b, m.Fields[min(m.HeaderFields, len(m.Fields)):])
	f.msg = nil
	return b
}

// object appends the JSON object of a struct's fields: each field's name and value; a struct
// is an object, an array or record set an array of its elements. A tagged section without
// fields is left out. A topic id whose name is known has the name beside it, as "topic".
func (f *fieldWriter) object(b []byte, ns []*codec.Node) []byte {
	b = append(b, '{')
	first := true
	for _, n := range ns {
		if n.Type == wire.TaggedFields && len(n.Children) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, n.Name)
		b = append(b, ':')
		b = f.value(b, n)
		if name, ok := n.Topic(); ok {
			b = append(b, `,"topic":`...)
			b = appendJSONString(b, name)
		}
		b = f.spill(b)
	}
	return append(b, '}')
}

// value appends a node's value: a leaf's as in the JSON lines (bytes as text when printable,
// hex otherwise), an array's or record set's elements in a JSON array, a struct's fields in an
// object, null for a null one (a null struct too). A records field left unexpanded is decoded a batch at a time into scratch nodes,
// each written and its nodes given back (codec.Message.EachRecord).
func (f *fieldWriter) value(b []byte, n *codec.Node) []byte {
	if n.Unexpanded() {
		if out, some := f.records(b, n); some {
			return out
		}
		// No entries: the field's value, as a decoded field without children.
	}
	switch {
	case n.Null():
		return append(b, "null"...)
	case n.Type.IsArray() && (n.Value != nil || len(n.Children) > 0), n.Type.IsRecords() && len(n.Children) > 0,
		n.Type == wire.RecordData:
		return f.elements(b, n.Children)
	case len(n.Children) > 0:
		return f.object(b, n.Children)
	}
	if v, ok := n.Value.([]byte); ok {
		return appendBytesValue(b, v)
	}
	return f.str.value(b, n.Value)
}

// records appends the entries of a records field left unexpanded as a JSON array, or reports
// that it has none. (A function of its own: the closure would move value's b to the heap in
// every call.)
func (f *fieldWriter) records(b []byte, n *codec.Node) ([]byte, bool) {
	b = append(b, '[')
	some := false
	f.msg.EachRecord(n, &f.scratch, func(c *codec.Node) {
		if some {
			b = append(b, ',')
		}
		some = true
		b = f.spill(f.value(b, c))
	})
	return append(b, ']'), some
}

// elements appends the values of nodes as a JSON array.
func (f *fieldWriter) elements(b []byte, nodes []*codec.Node) []byte {
	b = append(b, '[')
	for i, c := range nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = f.spill(f.value(b, c))
	}
	return append(b, ']')
}
