// Package filter is kdissect's display filter (-Y): one boolean expression, in the language of
// github.com/expr-lang/expr, compiled once and evaluated on each request/response pair.
//
// An expression names what the JSON lines say of a message (api_name, api_key, api_version,
// correlation_id, latency_us, frame, ...), the short names of a debugging session (api, key,
// version, corr, latency_ms), the pair's facts (model.Facts: topics, groups, errors, ...) and
// the bodies of the request and the response (req, resp), by the definitions' field names:
// structs are maps, arrays are lists. A field that is not there is absent, and a comparison
// with it is false; a null one is nil (see absentPatcher). What costs something to build (the
// bodies, the lists, the latency) is built only when the expression reaches it, at most once
// per pair.
package filter

import (
	"errors"
	"fmt"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/kdissect/kdissect/model"
)

// Filter is a compiled expression. It keeps the state of one evaluation, so it is not safe for
// concurrent use: give each goroutine its own (Compile again, or Clone).
type Filter struct {
	src  string
	prog *vm.Program
	// bodies: the expression reads req or resp, so the messages' field trees must be kept.
	bodies bool
	vm     vm.VM
	env    env
}

// Vars lists the names an expression may use, each with what it holds, in the order of the
// table of docs/filters.md (TestVarsInDocs checks it).
func Vars() []Var {
	vars := []Var{
		{"api, api_name", "the API's name: \"Fetch\""},
		{"key, api_key", "the API key"},
		{"version, api_version", "the API version"},
		{"corr, correlation_id", "the correlation id"},
		{"client_id", "the request's client id (nil without one)"},
		{"stream", "the connection's number"},
		{"kind", "\"request\" or \"response\" (of the message judged)"},
		{"frame, first_frame", "the packets of the message's last and first bytes"},
		{"time", "when its last byte was captured (compare with date(\"2026-11-29T10:00:00Z\"))"},
		{"src, dst", "its endpoints, \"10.0.0.5:53422\""},
		{"size", "its size in bytes, size prefix included"},
		{"request_frame", "a response's request's packet (0 when not captured)"},
		{"latency_ms, latency_us", "from request to response, float ms and integer µs (nil unless paired)"},
		{"no_response", "the request gets no response (Produce with acks=0)"},
		{"warnings", "the message's decoding warnings"},
	}
	facts := model.Facts()
	for i := range facts {
		vars = append(vars, Var{facts[i].Name, facts[i].About})
	}
	return append(vars, Var{"req, resp", "the request's and the response's body by field name (structs are maps, arrays lists; empty when not captured)"})
}

// Var is one name of an expression.
type Var struct{ Names, About string }

// env is what an expression sees. The names in lazy are patched into calls of its methods,
// so that each is computed only when the expression reaches it.
type env struct {
	API          string    `expr:"api"`
	APIName      string    `expr:"api_name"`
	Key          int       `expr:"key"`
	APIKey       int       `expr:"api_key"`
	Version      int       `expr:"version"`
	APIVersion   int       `expr:"api_version"`
	Corr         int       `expr:"corr"`
	CorrID       int       `expr:"correlation_id"`
	Stream       int       `expr:"stream"`
	Kind         string    `expr:"kind"`
	Frame        int       `expr:"frame"`
	FirstFrame   int       `expr:"first_frame"`
	Time         time.Time `expr:"time"`
	Src          string    `expr:"src"`
	Dst          string    `expr:"dst"`
	Size         int       `expr:"size"`
	RequestFrame int       `expr:"request_frame"`
	NoResponse   bool      `expr:"no_response"`

	// The pair and the message judged, and what has been built of them: the bodies, and the
	// pair's facts (model.Facts), a bit of factsBuilt for each.
	req, resp, msg *model.Entry
	reqBody        map[string]any
	respBody       map[string]any
	built          uint8
	facts          []model.Value
	factsBuilt     uint64
}

// lazy maps the names computed on demand to the methods of env that compute them.
var lazy = map[string]string{
	"req": "ReqBody", "resp": "RespBody", "latency_ms": "LatencyMs", "latency_us": "LatencyUs",
	"client_id": "ClientID", "warnings": "MsgWarnings",
}

// The bits of env.built.
const (
	builtReq = 1 << iota
	builtResp
)

func (e *env) ReqBody() map[string]any {
	if e.built&builtReq == 0 {
		e.built |= builtReq
		e.reqBody = bodyOf(e.req)
	}
	return e.reqBody
}

func (e *env) RespBody() map[string]any {
	if e.built&builtResp == 0 {
		e.built |= builtResp
		e.respBody = bodyOf(e.resp)
	}
	return e.respBody
}

func (e *env) LatencyMs() any {
	if e.resp == nil || e.resp.RequestFrame == 0 {
		return nil
	}
	return float64(e.resp.Latency) / float64(time.Millisecond)
}

func (e *env) LatencyUs() any {
	if e.resp == nil || e.resp.RequestFrame == 0 {
		return nil
	}
	return int(e.resp.Latency.Microseconds())
}

func (e *env) ClientID() any {
	if e.req == nil || e.req.Msg == nil || e.req.Msg.ClientID == nil {
		return nil
	}
	return *e.req.Msg.ClientID
}

func (e *env) MsgWarnings() []string {
	var out []string
	if e.msg.Msg != nil {
		for _, w := range e.msg.Msg.Warnings {
			out = append(out, w.String())
		}
	}
	return out
}

// Compile compiles an expression. Its errors are the library's, with the position and the
// expression marked where it went wrong.
func Compile(src string) (*Filter, error) {
	p := &patcher{}
	opts := []expr.Option{expr.Env(&env{}), expr.AsBool(), expr.Patch(p)}
	// Checked first as written (with the lazy names): a name the checker does not know has no
	// static type, and would otherwise pass for a missing field below.
	if _, err := expr.Compile(src, opts...); err != nil {
		return nil, err
	}
	prog, err := expr.Compile(src, append(opts, absentRule()...)...)
	if err != nil {
		return nil, err
	}
	return &Filter{src: src, prog: prog, bodies: p.bodies}, nil
}

// Position is where Compile found an expression wrong: Line and Column count from 1 (Column in
// characters), Offset is the index of that character in the whole expression, from 0.
type Position struct{ Line, Column, Offset int }

// ErrorAt returns the position an error of Compile names and its message without the position
// and the marked line (for a page to mark the place itself); ok is false for an error that
// names no position.
func ErrorAt(err error) (pos Position, msg string, ok bool) {
	var fe *file.Error
	if !errors.As(err, &fe) || fe.Snippet == "" {
		return Position{}, "", false
	}
	return Position{Line: fe.Line, Column: fe.Column + 1, Offset: fe.From}, fe.Message, true
}

// String returns the expression as given.
func (f *Filter) String() string { return f.src }

// ReadsBodies reports whether the expression reads req or resp: the messages must then be
// decoded in full, and their field trees kept until the pair is decided.
func (f *Filter) ReadsBodies() bool { return f.bodies }

// Match decides on a pair; req or resp may be nil (a request without a response in the
// capture, a response whose request was not captured). The names that describe one message
// (kind, frame, size, src, ...) are those of the request, then of the response: the pair
// matches when the expression holds for either. An expression that fails on the pair (a list
// compared with a number) does not match it, and the error says why.
func (f *Filter) Match(req, resp *model.Entry) (bool, error) {
	e := &f.env
	*e = env{req: req, resp: resp, facts: e.facts}
	var firstErr error
	for _, m := range []*model.Entry{req, resp} {
		if m == nil || m.Msg == nil {
			continue
		}
		e.fill(m)
		out, err := f.vm.Run(f.prog, e)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("frame %d: %w", m.Frame, err)
			}
			continue
		}
		if ok, _ := out.(bool); ok {
			return true, nil
		}
	}
	return false, firstErr
}

// fill sets the names of the message judged.
func (e *env) fill(m *model.Entry) {
	msg := m.Msg
	e.msg = m
	e.API, e.APIName = msg.APIName, msg.APIName
	e.Key, e.APIKey = int(msg.APIKey), int(msg.APIKey)
	e.Version, e.APIVersion = int(msg.Version), int(msg.Version)
	e.Corr, e.CorrID = int(msg.CorrelationID), int(msg.CorrelationID)
	e.Stream = m.Stream
	e.Kind = "request"
	if msg.Response {
		e.Kind = "response"
	}
	e.Frame, e.FirstFrame, e.Time = m.Frame, m.FirstFrame, m.Time
	e.Src, e.Dst, e.Size = m.Src, m.Dst, msg.Size
	e.RequestFrame, e.NoResponse = m.RequestFrame, m.NoResponse
}

// patcher turns the names of lazy into calls of env's methods, and notes whether the bodies
// are read.
type patcher struct{ bodies bool }

func (p *patcher) Visit(n *ast.Node) {
	id, ok := (*n).(*ast.IdentifierNode)
	if !ok {
		return
	}
	if i, ok := factIndex(id.Value); ok {
		ast.Patch(n, &ast.CallNode{Callee: &ast.IdentifierNode{Value: factMethods[model.Facts()[i].Kind]},
			Arguments: []ast.Node{&ast.IntegerNode{Value: i}}})
		return
	}
	method, ok := lazy[id.Value]
	if !ok {
		return
	}
	if id.Value == "req" || id.Value == "resp" {
		p.bodies = true
	}
	ast.Patch(n, &ast.CallNode{Callee: &ast.IdentifierNode{Value: method}})
}
