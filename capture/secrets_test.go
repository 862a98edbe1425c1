package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// dsbBlock is a little-endian Decryption Secrets Block.
func dsbBlock(typ uint32, data []byte) []byte {
	pad := (4 - len(data)%4) % 4
	n := 20 + len(data) + pad
	b := binary.LittleEndian.AppendUint32(nil, 0x0a)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, typ)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	b = append(append(b, data...), make([]byte, pad)...)
	return binary.LittleEndian.AppendUint32(b, uint32(n))
}

// Decryption Secrets Blocks are returned wherever they are: between the section header and
// the first interface (where editcap --inject-secrets puts them, and gopacket's reader keeps
// them to itself), or between packets (where gopacket's reader skips them).
func TestSecrets(t *testing.T) {
	var b bytes.Buffer
	w, err := pcapgo.NewNgWriter(&b, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	pkt := func() {
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: 14, Length: 14}, make([]byte, 14)); err != nil {
			t.Fatal(err)
		}
	}
	pkt()
	if err := w.WriteDecryptionSecretsBlock(pcapgo.DSB_SECRETS_TYPE_TLS, []byte("CLIENT_RANDOM mid\n")); err != nil {
		t.Fatal(err)
	}
	pkt()
	w.Flush()
	file := b.Bytes()
	shbLen := binary.LittleEndian.Uint32(file[4:8])
	early := append(dsbBlock(SecretsTLSKeyLog, []byte("CLIENT_RANDOM early")), dsbBlock(0x5353484b, []byte("ssh"))...)
	file = append(append(bytes.Clone(file[:shbLen]), early...), file[shbLen:]...)

	r, err := NewReader(bytes.NewReader(file), "dsb.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	var got []Secrets
	for {
		_, err := r.Next()
		got = append(got, r.Secrets()...)
		if err == io.EOF {
			break
		}
	}
	if len(got) != 3 || got[0].Type != SecretsTLSKeyLog || string(got[0].Data) != "CLIENT_RANDOM early" ||
		got[1].Type != 0x5353484b || string(got[2].Data) != "CLIENT_RANDOM mid\n" {
		t.Errorf("secrets %+v", got)
	}
	if r.Stats().Packets != 2 {
		t.Errorf("%d packets", r.Stats().Packets)
	}
}
