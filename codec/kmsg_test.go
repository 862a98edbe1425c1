package codec

// The differential test: franz-go's kmsg, an independent implementation of every Kafka message,
// encodes randomly filled messages; kdissect decodes them with its own definitions. Any
// difference in the bytes consumed or in the values read is a bug in a definition or in the
// interpreter.

import (
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/codec/wire"
)

var (
	kmsgSeed  = flag.Int64("kmsg.seed", -1, "replay one seed of the kmsg differential test")
	kmsgSeeds = flag.Int("kmsg.seeds", 4, "random seeds per (key, version, direction)")
)

// kmsgField is what kmsg's generated source says of a struct field: its versions and tag.
type kmsgField struct {
	lo, hi int16
	tag    int
	// commented: the field had a version or tag comment. kmsg leaves out the comment of some
	// fields its encoder limits to v0; for fields without one, the test checks by perturbation.
	commented bool
}

// kmsgMeta reads kmsg's generated.go once: for every struct, the trailing comments of its
// fields ("// v3+", "// v0-v14", "// tag 2").
var kmsgMeta = sync.OnceValues(func() (map[string]map[string]kmsgField, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/twmb/franz-go/pkg/kmsg").Output()
	if err != nil {
		return nil, fmt.Errorf("locating kmsg: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "generated.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	plus := regexp.MustCompile(`^v(\d+)\+$`)
	rng := regexp.MustCompile(`^v(\d+)-v(\d+)$`)
	tag := regexp.MustCompile(`^tag (\d+)$`)
	meta := map[string]map[string]kmsgField{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			fields := map[string]kmsgField{}
			for _, fl := range st.Fields.List {
				m := kmsgField{lo: 0, hi: 32767, tag: -1}
				if fl.Comment != nil {
					m.commented = true
					c := strings.TrimSpace(fl.Comment.Text())
					if s := plus.FindStringSubmatch(c); s != nil {
						lo, _ := strconv.Atoi(s[1])
						m.lo = int16(lo)
					} else if s := rng.FindStringSubmatch(c); s != nil {
						lo, _ := strconv.Atoi(s[1])
						hi, _ := strconv.Atoi(s[2])
						m.lo, m.hi = int16(lo), int16(hi)
					} else if s := tag.FindStringSubmatch(c); s != nil {
						m.tag, _ = strconv.Atoi(s[1])
					}
				}
				for _, n := range fl.Names {
					fields[n.Name] = m
				}
			}
			meta[ts.Name.Name] = fields
		}
	}
	return meta, nil
})

// filler fills kmsg structs with random values.
type filler struct {
	r     *rand.Rand
	nulls bool // allow nil *string and nil struct pointers
}

var tagsType = reflect.TypeOf(kmsg.Tags{})

func (f *filler) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.r.Intn(2) == 1)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.r.Int63() - f.r.Int63())
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(f.r.Uint64())
	case reflect.Float64:
		v.SetFloat(f.r.NormFloat64() * 1e6)
	case reflect.String:
		v.SetString(f.str())
	case reflect.Array: // [16]byte uuids
		for i := 0; i < v.Len(); i++ {
			f.fill(v.Index(i), depth)
		}
	case reflect.Pointer:
		if f.nulls && f.r.Intn(4) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, f.r.Intn(12))
			f.r.Read(b)
			v.SetBytes(b)
			return
		}
		n := f.r.Intn(4)
		if depth > 3 {
			n = f.r.Intn(2)
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Struct:
		if v.Type() == tagsType {
			if f.r.Intn(5) == 0 {
				var t kmsg.Tags
				b := make([]byte, f.r.Intn(5))
				f.r.Read(b)
				t.Set(uint32(1000+f.r.Intn(10)), b)
				v.Set(reflect.ValueOf(t))
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Name == "Version" && depth == 0 {
				continue
			}
			if v.Field(i).CanSet() {
				f.fill(v.Field(i), depth)
			}
		}
	}
}

func (f *filler) str() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789-_."
	b := make([]byte, f.r.Intn(10))
	for i := range b {
		b[i] = letters[f.r.Intn(len(letters))]
	}
	return string(b)
}

// item is one expected or decoded value, or a tagged section.
type item struct {
	tok  string
	tags *tagBlock
	// notNullable marks a decoded string whose definition is not nullable at this version:
	// kmsg writes its nil *string there as "", which is right on the wire.
	notNullable bool
}

type tagBlock struct {
	known   map[int][]item
	unknown map[int]string // hex of the raw bytes
}

// want lists what kmsg's struct puts on the wire at version v, in wire order.
type want struct {
	meta map[string]map[string]kmsgField
	v    int16
	flex bool
	// named records every tagged kmsg field ("Type.Field") decoded by name somewhere.
	tagged map[string]bool
	// encode re-encodes the whole message; orig is its first encoding.
	encode func() []byte
	orig   []byte
}

// onWire reports whether field i of struct v is written at all: it changes the field, encodes
// the message again, and restores it.
func (w *want) onWire(v reflect.Value, i int) bool {
	f := v.Field(i)
	saved := reflect.New(f.Type()).Elem()
	saved.Set(f)
	defer f.Set(saved)
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.SetInt(f.Int() ^ 1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.SetUint(f.Uint() ^ 1)
	case reflect.Float64:
		f.SetFloat(f.Float() + 1)
	case reflect.String:
		f.SetString(f.String() + "x")
	case reflect.Array:
		f.Index(0).SetUint(f.Index(0).Uint() ^ 1)
	case reflect.Slice:
		f.Set(reflect.Append(f, reflect.New(f.Type().Elem()).Elem()))
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if f.Type().Elem().Kind() == reflect.String {
			s := "x"
			if !f.IsNil() {
				s = f.Elem().String() + "x"
			}
			p.Elem().SetString(s)
			f.Set(p)
		} else if f.IsNil() {
			f.Set(p)
		} else {
			f.SetZero()
		}
	default:
		return true
	}
	var b []byte
	func() {
		defer func() { recover() }()
		b = w.encode()
	}()
	return b == nil || string(b) != string(w.orig)
}

func (w *want) structItems(v reflect.Value) ([]item, error) {
	t := v.Type()
	fm, ok := w.meta[t.Name()]
	if !ok {
		return nil, fmt.Errorf("kmsg type %s not found in generated.go", t.Name())
	}
	var out []item
	block := &tagBlock{known: map[int][]item{}, unknown: map[int]string{}}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Name == "Version" || !sf.IsExported() {
			continue
		}
		fv := v.Field(i)
		if sf.Type == tagsType {
			tags := fv.Interface().(kmsg.Tags)
			tags.Each(func(tag uint32, b []byte) {
				block.unknown[int(tag)] = hex.EncodeToString(b)
			})
			continue
		}
		m := fm[sf.Name]
		if m.tag >= 0 {
			items, err := w.valueItems(fv)
			if err != nil {
				return nil, err
			}
			block.known[m.tag] = items
			w.tagged[t.Name()+"."+sf.Name] = w.tagged[t.Name()+"."+sf.Name] || false
			continue
		}
		if w.v < m.lo || w.v > m.hi || (!m.commented && !w.onWire(v, i)) {
			continue
		}
		items, err := w.valueItems(fv)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %v", t.Name(), sf.Name, err)
		}
		out = append(out, items...)
	}
	if w.flex {
		out = append(out, item{tags: block})
	}
	return out, nil
}

func (w *want) valueItems(v reflect.Value) ([]item, error) {
	switch v.Kind() {
	case reflect.Bool:
		return []item{{tok: strconv.FormatBool(v.Bool())}}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []item{{tok: strconv.FormatInt(v.Int(), 10)}}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []item{{tok: strconv.FormatUint(v.Uint(), 10)}}, nil
	case reflect.Float64:
		return []item{{tok: strconv.FormatFloat(v.Float(), 'g', -1, 64)}}, nil
	case reflect.String:
		return []item{{tok: "s:" + v.String()}}, nil
	case reflect.Array:
		b := make([]byte, v.Len())
		reflect.Copy(reflect.ValueOf(b), v)
		return []item{{tok: "u:" + hex.EncodeToString(b)}}, nil
	case reflect.Pointer:
		if v.IsNil() {
			if v.Type().Elem().Kind() == reflect.Struct {
				return []item{{tok: "null-struct"}}, nil
			}
			return []item{{tok: "null"}}, nil
		}
		if v.Type().Elem().Kind() == reflect.Struct {
			items, err := w.structItems(v.Elem())
			return append([]item{{tok: "struct"}}, items...), err
		}
		return w.valueItems(v.Elem())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.IsNil() {
				return []item{{tok: "null"}}, nil
			}
			return []item{{tok: "b:" + hex.EncodeToString(v.Bytes())}}, nil
		}
		out := []item{{tok: "len=" + strconv.Itoa(v.Len())}}
		for i := 0; i < v.Len(); i++ {
			var items []item
			var err error
			if v.Index(i).Kind() == reflect.Struct {
				items, err = w.structItems(v.Index(i))
			} else {
				items, err = w.valueItems(v.Index(i))
			}
			if err != nil {
				return nil, err
			}
			out = append(out, items...)
		}
		return out, nil
	case reflect.Struct:
		return w.structItems(v)
	}
	return nil, fmt.Errorf("unhandled kmsg kind %s", v.Kind())
}

// gotItems lists what kdissect decoded, in the same shape as want. frame gives back the raw
// bytes of fields kdissect decodes further (SASL tokens).
func gotItems(nodes []*Node, frame []byte) []item {
	var out []item
	for _, n := range nodes {
		if n.Def != nil && n.Def.Name == "AuthBytes" && len(n.Children) > 0 {
			out = append(out, item{tok: "b:" + hex.EncodeToString(frame[n.Offset+n.Head():n.Offset+n.Size])})
			continue
		}
		switch n.Type {
		case wire.Array, wire.CompactArray:
			if n.Value == nil {
				out = append(out, item{tok: "null"})
				continue
			}
			out = append(out, item{tok: fmt.Sprintf("len=%d", n.Value)})
			for _, c := range n.Children {
				if c.Type == wire.Struct {
					out = append(out, gotItems(c.Children, frame)...)
				} else {
					out = append(out, gotItems([]*Node{c}, frame)...)
				}
			}
		case wire.Struct:
			out = append(out, gotItems(n.Children, frame)...)
		case wire.NullableStruct:
			if n.Children[0].Value.(int64) < 0 {
				out = append(out, item{tok: "null-struct"})
				continue
			}
			out = append(out, item{tok: "struct"})
			out = append(out, gotItems(n.Children[1:], frame)...)
		case wire.TaggedFields:
			b := &tagBlock{known: map[int][]item{}, unknown: map[int]string{}}
			for _, t := range n.Children {
				tag := int(t.Children[0].Value.(int64))
				if strings.HasPrefix(t.Name, "unknown tag") {
					b.unknown[tag] = hex.EncodeToString(t.Children[2].Value.([]byte))
				} else if len(t.Children) > 2 {
					b.known[tag] = gotItems(t.Children[2:3], frame)
				}
			}
			out = append(out, item{tags: b})
		default:
			out = append(out, item{tok: scalarTok(n), notNullable: n.Type == wire.String || n.Type == wire.CompactString})
		}
	}
	return out
}

func scalarTok(n *Node) string {
	switch v := n.Value.(type) {
	case nil:
		return "null"
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "s:" + v
	case []byte:
		return "b:" + hex.EncodeToString(v)
	case UUID:
		return "u:" + hex.EncodeToString(v[:])
	}
	return fmt.Sprintf("?%T", n.Value)
}

// compareItems returns a description of the first difference, or "".
func compareItems(path string, want, got []item, named func(tag int)) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		if i >= len(got) {
			return fmt.Sprintf("%s: kdissect stops after %d values; kmsg has %s next", path, i, show(want[i]))
		}
		if i >= len(want) {
			return fmt.Sprintf("%s: kdissect has extra value %s at %d", path, show(got[i]), i)
		}
		w, g := want[i], got[i]
		if (w.tags == nil) != (g.tags == nil) {
			return fmt.Sprintf("%s[%d]: want %s, got %s (context: %s)", path, i, show(w), show(g), context(got, i))
		}
		if w.tags == nil {
			if w.tok == "null" && g.tok == "s:" && g.notNullable {
				continue
			}
			if w.tok != g.tok {
				return fmt.Sprintf("%s[%d]: want %s, got %s (context: %s)", path, i, w.tok, g.tok, context(got, i))
			}
			continue
		}
		for tag, raw := range g.tags.unknown {
			if wr, ok := w.tags.unknown[tag]; ok {
				if wr != raw {
					return fmt.Sprintf("%s[%d]: unknown tag %d: want %s, got %s", path, i, tag, wr, raw)
				}
			} else if _, ok := w.tags.known[tag]; !ok {
				return fmt.Sprintf("%s[%d]: kdissect read tag %d that kmsg does not have", path, i, tag)
			}
			// A tag kmsg knows but the definition does not at this version: kmsg writes tagged
			// fields whenever they are set, whatever their taggedVersions.
		}
		for tag, items := range g.tags.known {
			wi, ok := w.tags.known[tag]
			if !ok {
				return fmt.Sprintf("%s[%d]: kdissect names tag %d, which kmsg does not have", path, i, tag)
			}
			named(tag)
			if d := compareItems(fmt.Sprintf("%s[%d].tag%d", path, i, tag), wi, items, func(int) {}); d != "" {
				return d
			}
		}
	}
	return ""
}

func show(it item) string {
	if it.tags != nil {
		return "<tagged fields>"
	}
	return it.tok
}

func context(items []item, i int) string {
	lo := max(0, i-4)
	var parts []string
	for _, it := range items[lo:min(len(items), i+3)] {
		parts = append(parts, show(it))
	}
	return strings.Join(parts, " ")
}

// checkTiling requires the nodes to cover [0, size) exactly: each node starts where the previous
// one ended, and a parent's children lie inside it after its own prefix.
func checkTiling(nodes []*Node, size int) string {
	pos := 0
	var walk func([]*Node) string
	walk = func(ns []*Node) string {
		for _, n := range ns {
			if n.Offset != pos {
				return fmt.Sprintf("%s starts at 0x%x, expected 0x%x", n.Name, n.Offset, pos)
			}
			if len(n.Children) == 0 || n.Type == wire.CompressedRecords {
				pos += n.Size
				continue
			}
			if n.Head() < 0 {
				return fmt.Sprintf("%s: first child before the node", n.Name)
			}
			pos += n.Head()
			if d := walk(n.Children); d != "" {
				return d
			}
			if pos != n.Offset+n.Size {
				return fmt.Sprintf("%s ends at 0x%x, its children at 0x%x", n.Name, n.Offset+n.Size, pos)
			}
		}
		return ""
	}
	if d := walk(nodes); d != "" {
		return d
	}
	if pos != size {
		return fmt.Sprintf("fields cover 0x%x of 0x%x bytes", pos, size)
	}
	return ""
}

// frame wraps a kmsg body in a size prefix and a header built by hand.
func frame(key, version int16, flexible, response bool, corr int32, body []byte) []byte {
	var h []byte
	if response {
		h = binary.BigEndian.AppendUint32(h, uint32(corr))
		if flexible && key != 18 {
			h = append(h, 0)
		}
	} else {
		h = binary.BigEndian.AppendUint16(h, uint16(key))
		h = binary.BigEndian.AppendUint16(h, uint16(version))
		h = binary.BigEndian.AppendUint32(h, uint32(corr))
		if !(key == 7 && version == 0) {
			h = binary.BigEndian.AppendUint16(h, 4)
			h = append(h, "kdis"...)
			if flexible {
				h = append(h, 0)
			}
		}
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body)))
	return append(append(out, h...), body...)
}

// kmsgWrong lists cases where kmsg's encoding is not what Kafka sends, so it cannot be the
// oracle: StopReplica v4 requests carry isKRaftController between ControllerId and
// ControllerEpoch on the wire (as in LeaderAndIsr v7), where kmsg 1.15.1 writes it last.
var kmsgWrong = map[string]string{
	"5/v4/request": "kmsg writes IsKRaftController after ControllerEpoch; Kafka sends it before",
}

func TestKmsgDifferential(t *testing.T) {
	meta, err := kmsgMeta()
	if err != nil {
		t.Fatal(err)
	}
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c := New(set)
	c.ShowSecrets = true // secrets are redacted by value; the test compares values
	cases := 0
	for key := int16(0); key < 1000; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		t.Run(strconv.Itoa(int(key)), func(t *testing.T) {
			tagged := map[string]bool{}
			for v := int16(0); v <= req.MaxVersion(); v++ {
				for _, response := range []bool{false, true} {
					cases++
					dir := "request"
					if response {
						dir = "response"
					}
					t.Run(fmt.Sprintf("v%d/%s", v, dir), func(t *testing.T) {
						if why, ok := kmsgWrong[fmt.Sprintf("%d/v%d/%s", key, v, dir)]; ok {
							t.Skip(why)
						}
						seeds := []int64{}
						if *kmsgSeed >= 0 {
							seeds = append(seeds, *kmsgSeed)
						} else {
							for s := 0; s < *kmsgSeeds; s++ {
								seeds = append(seeds, int64(key)*100000+int64(v)*100+int64(s)*2+map[bool]int64{false: 0, true: 1}[response])
							}
						}
						for _, seed := range seeds {
							if d := diffOne(c, meta, key, v, response, seed, tagged); d != "" {
								t.Fatalf("%s v%d %s, seed %d (replay: go test ./codec -run 'TestKmsgDifferential/^%d$/v%d/%s' -kmsg.seed %d):\n%s",
									kmsg.NameForKey(key), v, dir, seed, key, v, dir, seed, d)
							}
						}
					})
				}
			}
			if *kmsgSeed < 0 && !t.Failed() {
				for name, ok := range tagged {
					if !ok {
						t.Errorf("kmsg's tagged field %s was never decoded by name at any version", name)
					}
				}
			}
		})
	}
	t.Logf("kmsg differential: %d (key, version, direction) cases, %d seeds each", cases, *kmsgSeeds)
	t.Logf("encodings checked: %+v", kmsgEncodings)
	if *kmsgSeed < 0 && (kmsgEncodings.Prefixed == 0 || kmsgEncodings.Nulls == 0 || kmsgEncodings.Varints == 0 || kmsgEncodings.Bits == 0) {
		t.Errorf("the encodings checks saw too little: %+v", kmsgEncodings)
	}
}

// kmsgMessage is a kmsg request or response.
type kmsgMessage interface {
	SetVersion(int16)
	AppendTo([]byte) []byte
	IsFlexible() bool
}

// eachKmsgMessage calls f for every API key, version and direction kmsg knows.
func eachKmsgMessage(f func(key, v int16, response bool)) {
	for key := int16(0); key < 1000; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		for v := int16(0); v <= req.MaxVersion(); v++ {
			f(key, v, false)
			f(key, v, true)
		}
	}
}

// kmsgFrame fills a kmsg message of the given key, version and direction with random values
// from seed, and frames it; body is the message's encoding.
func kmsgFrame(key, v int16, response bool, seed int64) (msg kmsgMessage, body, fr []byte) {
	if response {
		msg = kmsg.ResponseForKey(key)
	} else {
		msg = kmsg.RequestForKey(key)
	}
	msg.SetVersion(v)
	for attempt := 0; attempt < 2; attempt++ {
		f := &filler{r: rand.New(rand.NewSource(seed)), nulls: attempt == 0}
		f.fill(reflect.ValueOf(msg).Elem(), 0)
		msg.SetVersion(v)
		ok := func() (ok bool) {
			// kmsg dereferences a nil optional field in versions where it is not nullable.
			defer func() { ok = recover() == nil }()
			body = msg.AppendTo(nil)
			return true
		}()
		if ok {
			break
		}
	}
	return msg, body, frame(key, v, msg.IsFlexible(), response, 12345, body)
}

// kmsgEncodings counts what CheckEncodings saw in the differential test.
var kmsgEncodings EncodingCounts

func diffOne(c *Codec, meta map[string]map[string]kmsgField, key, v int16, response bool, seed int64, tagged map[string]bool) string {
	msg, body, fr := kmsgFrame(key, v, response, seed)
	flexible := msg.IsFlexible()
	var m *Message
	if response {
		m = c.DecodeResponse(fr, key, v)
	} else {
		m = c.DecodeRequest(fr)
	}
	var b strings.Builder
	for _, w := range m.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	if d := checkTiling(m.Fields, len(fr)); d != "" {
		fmt.Fprintf(&b, "tiling: %s\n", d)
	}
	problems, counts := CheckEncodings(m.Fields, fr)
	for _, p := range problems {
		fmt.Fprintf(&b, "encoding: %s\n", p)
	}
	kmsgEncodings.Add(counts)
	w := &want{meta: meta, v: v, flex: flexible, tagged: map[string]bool{}, orig: body,
		encode: func() []byte { return msg.AppendTo(nil) }}
	wantItems, err := w.structItems(reflect.ValueOf(msg).Elem())
	if err != nil {
		return err.Error()
	}
	for name := range w.tagged {
		if _, seen := tagged[name]; !seen {
			tagged[name] = false
		}
	}
	got := gotItems(m.Fields[m.HeaderFields:], fr)
	if d := compareItems("body", wantItems, got, func(tag int) { markTagged(tagged, w.tagged, tag) }); d != "" {
		fmt.Fprintf(&b, "values: %s\n", d)
	}
	if b.Len() > 0 {
		fmt.Fprintf(&b, "frame: %x", fr)
	}
	return b.String()
}

// markTagged records that a tagged field with this tag was decoded by name. Tags are matched by
// number only: precise enough to catch a definition that misses a tagged field everywhere.
func markTagged(all, here map[string]bool, tag int) {
	meta, _ := kmsgMeta()
	for name := range here {
		typ, field, _ := strings.Cut(name, ".")
		if meta[typ][field].tag == tag {
			all[name] = true
		}
	}
}
