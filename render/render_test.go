package render

import (
	"testing"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/wire"
	"github.com/kdissect/kdissect/model"
)

func TestEntryRedacted(t *testing.T) {
	frame := []byte("\x00\x00\x00\x08userpass")
	secret := &codec.Message{Fields: []*codec.Node{
		{Name: "message_size", Type: wire.Int32, Size: 4, Value: int64(8)},
		{Name: "token", Type: wire.Bytes, Offset: 4, Size: 8, Children: []*codec.Node{
			{Name: "user", Type: wire.SASL, Offset: 4, Size: 4, Value: "user"},
			{Name: "password", Type: wire.SASL, Offset: 8, Size: 4, Value: codec.Redacted, Secret: true},
		}},
	}}
	e := &model.Entry{Msg: secret, Bytes: frame}
	if got := string(e.Redacted()); got != "\x00\x00\x00\x08user****" {
		t.Errorf("redacted %q", got)
	}
	if string(frame) != "\x00\x00\x00\x08userpass" {
		t.Errorf("the entry's bytes were changed: %q", frame)
	}
	plain := &model.Entry{Msg: &codec.Message{Fields: secret.Fields[:1]}, Bytes: frame}
	if got := plain.Redacted(); &got[0] != &frame[0] {
		t.Errorf("bytes with no secret were copied")
	}
	if got := (&model.Entry{Msg: secret}).Redacted(); got != nil {
		t.Errorf("no bytes gave %q", got)
	}
}
