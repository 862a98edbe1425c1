// Package hostile builds, for tests, a capture whose every string is chosen to attack whoever
// shows it: terminal escape sequences (a window title, a cleared screen, colours, the cursor
// moved up and a line erased), bare CR and LF, a C1 control, a bidirectional override, bytes
// that are not UTF-8 and markup. The strings go wherever a Kafka client or broker can put
// one: client id and software, topics, groups, member ids, broker hosts and racks, record
// keys, values and headers, error messages, config values, SASL mechanism and user. Requests
// and responses are encoded by franz-go's kmsg, an independent encoder; the capture is a pcap
// file written by pcapgo. Only tests import it.
package hostile

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Payload is what every string of the capture carries after the name of its place.
const Payload = "\x1b]0;owned\a\x1b[2J\x1b[31mred\x1b[0m\x1b[1A\x1b[2K\rkdissect: fake\nline \u009b31m \u202eevil\u202c \xff\xfe " +
	`</script><script>alert(1)</script><img src=x onerror=alert(2)>`

// Places names every place the capture puts a string, in the order Capture asks for them.
func Places() []string {
	return []string{"client id", "client software", "client software version", "sasl mechanisms",
		"sasl user", "sasl error", "topic", "broker host", "broker rack", "cluster id", "group", "coordinator host",
		"coordinator error", "member id", "group instance id", "protocol type", "protocol", "join reason",
		"transactional id", "record key", "record value", "header key", "header value", "produce error",
		"record error", "config name", "config value", "config error", "other mechanism", "plain user"}
}

// PrintablePayload is what "plain user" carries: the part of Payload that a SASL PLAIN token's
// user may hold and still be read as a user name (printable text, CR and LF among it).
const PrintablePayload = "\rkdissect: fake\nline\t</script><img src=x onerror=alert(3)>"

// String is the string of a place: its name, then Payload (PrintablePayload for "plain user").
func String(place string) string {
	if place == "plain user" {
		return place + ": " + PrintablePayload
	}
	return place + ": " + Payload
}

// Capture returns a pcap file of two Kafka connections whose strings are s(place) for each
// place of Places.
func Capture(s func(place string) string) ([]byte, error) {
	str := func(place string) *string { v := s(place); return &v }
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	if err := w.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		return nil, err
	}
	c := &conn{w: w, client: 40001, t: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
	if err := c.exchange(s("client id"), conversation(s, str)); err != nil {
		return nil, err
	}
	// A second connection names a mechanism of its own, which the first could not (its
	// authentication is PLAIN, so that the user is read).
	c2 := &conn{w: w, client: 40002, t: c.t}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, s("other mechanism")
	hr := kmsg.NewPtrSASLHandshakeResponse()
	hr.Version, hr.ErrorCode, hr.SupportedMechanisms = 1, 33, []string{s("sasl mechanisms")}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 2, []byte("\x00"+s("plain user")+"\x00secret")
	authr := kmsg.NewPtrSASLAuthenticateResponse()
	authr.Version = 2
	if err := c2.exchange(s("client id"), []pair{{hs, hr}, {auth, authr}}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pair is a request and its response.
type pair struct {
	req  kmsg.Request
	resp kmsg.Response
}

// conversation is the first connection's requests and responses.
func conversation(s func(string) string, str func(string) *string) []pair {
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = 3, s("client software"), s("client software version")
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.Version = 3
	avr.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MinVersion: 0, MaxVersion: 9}}

	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	hsr := kmsg.NewPtrSASLHandshakeResponse()
	hsr.Version, hsr.SupportedMechanisms = 1, []string{"PLAIN", s("sasl mechanisms")}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 2, []byte("\x00"+s("sasl user")+"\x00secret")
	authr := kmsg.NewPtrSASLAuthenticateResponse()
	authr.Version, authr.ErrorCode, authr.ErrorMessage = 2, 58, str("sasl error")

	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: str("topic")}}
	mdr := kmsg.NewPtrMetadataResponse()
	mdr.Version, mdr.ClusterID, mdr.ControllerID = 12, str("cluster id"), 1
	mdr.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: s("broker host"), Port: 9092, Rack: str("broker rack")}}
	mdr.Topics = []kmsg.MetadataResponseTopic{{Topic: str("topic"), TopicID: [16]byte{1, 2, 3},
		Partitions: []kmsg.MetadataResponseTopicPartition{{Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}}}}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKeys = 4, []string{s("group")}
	fcr := kmsg.NewPtrFindCoordinatorResponse()
	fcr.Version = 4
	fcr.Coordinators = []kmsg.FindCoordinatorResponseCoordinator{
		{Key: s("group"), NodeID: 1, Host: s("coordinator host"), Port: 9092},
		{Key: s("group") + "2", NodeID: -1, Port: -1, ErrorCode: 15, ErrorMessage: str("coordinator error")}}

	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 9, s("group"), 45000, 60000
	jg.MemberID, jg.InstanceID, jg.ProtocolType, jg.Reason = s("member id"), str("group instance id"), s("protocol type"), str("join reason")
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: s("protocol"), Metadata: []byte{0, 1}}}
	jgr := kmsg.NewPtrJoinGroupResponse()
	jgr.Version, jgr.Generation, jgr.ProtocolType, jgr.Protocol = 9, 1, str("protocol type"), str("protocol")
	jgr.LeaderID, jgr.MemberID = s("member id"), s("member id")
	jgr.Members = []kmsg.JoinGroupResponseMember{{MemberID: s("member id"), InstanceID: str("group instance id"), ProtocolMetadata: []byte{0, 1}}}

	pr := kmsg.NewPtrProduceRequest()
	pr.Version, pr.TransactionID, pr.Acks, pr.TimeoutMillis = 9, str("transactional id"), -1, 30000
	pr.Topics = []kmsg.ProduceRequestTopic{{Topic: s("topic"),
		Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: batch(s)}}}}
	prr := kmsg.NewPtrProduceResponse()
	prr.Version = 9
	prr.Topics = []kmsg.ProduceResponseTopic{{Topic: s("topic"), Partitions: []kmsg.ProduceResponseTopicPartition{{
		Partition: 0, ErrorCode: 87, BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1, ErrorMessage: str("produce error"),
		ErrorRecords: []kmsg.ProduceResponseTopicPartitionErrorRecord{{RelativeOffset: 0, ErrorMessage: str("record error")}}}}}}

	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Version = 4
	dc.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: 2, ResourceName: s("topic"), ConfigNames: []string{s("config name")}}}
	dcr := kmsg.NewPtrDescribeConfigsResponse()
	dcr.Version = 4
	dcr.Resources = []kmsg.DescribeConfigsResponseResource{{ErrorCode: 0, ErrorMessage: str("config error"), ResourceType: 2, ResourceName: s("topic"),
		Configs: []kmsg.DescribeConfigsResponseResourceConfig{{Name: s("config name"), Value: str("config value"), Source: 1}}}}

	return []pair{{av, avr}, {hs, hsr}, {auth, authr}, {md, mdr}, {fc, fcr}, {jg, jgr}, {pr, prr}, {dc, dcr}}
}

// batch is a record batch of one record with a hostile key, value and header, its length and
// CRC-32C filled in.
func batch(s func(string) string) []byte {
	r := kmsg.Record{Key: []byte(s("record key")), Value: []byte(s("record value")),
		Headers: []kmsg.Header{{Key: s("header key"), Value: []byte(s("header value"))}}}
	r.Length = int32(len(r.AppendTo(nil)) - 1) // with Length 0, whose varint takes one byte
	records := r.AppendTo(nil)
	rb := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, FirstTimestamp: 1796032800000, MaxTimestamp: 1796032800000,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1, Records: records}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// conn is one TCP connection from 10.0.0.1:client to 10.0.0.2:9092, written packet by packet.
type conn struct {
	w                  *pcapgo.Writer
	client             uint16
	t                  time.Time
	clientSeq, srvSeq  uint32
	handshaken, failed bool
}

var (
	clientIP = net.IP{10, 0, 0, 1}
	brokerIP = net.IP{10, 0, 0, 2}
)

// exchange writes the handshake, then each request and its response, correlation ids from 1.
func (c *conn) exchange(clientID string, pairs []pair) error {
	c.clientSeq, c.srvSeq = 1000, 5000
	for _, p := range []struct {
		toBroker bool
		syn, ack bool
	}{{true, true, false}, {false, true, true}, {true, false, true}} {
		if err := c.packet(p.toBroker, p.syn, p.ack, nil); err != nil {
			return err
		}
	}
	for i, p := range pairs {
		corr := int32(i + 1)
		if err := c.packet(true, false, true, request(p.req, corr, clientID)); err != nil {
			return err
		}
		if err := c.packet(false, false, true, response(p.resp, corr)); err != nil {
			return err
		}
	}
	return nil
}

// request is a request's frame: size, header v1 or v2 (flexible), body.
func request(r kmsg.Request, corr int32, clientID string) []byte {
	b := make([]byte, 4, 256)
	b = binary.BigEndian.AppendUint16(b, uint16(r.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(r.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	if r.IsFlexible() {
		b = append(b, 0) // no tagged fields
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// response is a response's frame: size, header v0, or v1 when flexible but for ApiVersions.
func response(r kmsg.Response, corr int32) []byte {
	b := make([]byte, 4, 256)
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if r.IsFlexible() && r.Key() != 18 {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// packet writes one TCP segment, a millisecond after the last.
func (c *conn) packet(toBroker, syn, ack bool, payload []byte) error {
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: clientIP, DstIP: brokerIP}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(c.client), DstPort: 9092, SYN: syn, ACK: ack, PSH: len(payload) > 0,
		Seq: c.clientSeq, Ack: c.srvSeq, Window: 65535}
	seq := &c.clientSeq
	if !toBroker {
		ip.SrcIP, ip.DstIP = brokerIP, clientIP
		tcp.SrcPort, tcp.DstPort = tcp.DstPort, tcp.SrcPort
		tcp.Seq, tcp.Ack = c.srvSeq, c.clientSeq
		seq = &c.srvSeq
	}
	if syn && !ack {
		tcp.Ack = 0
	}
	tcp.SetNetworkLayerForChecksum(ip)
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		return err
	}
	*seq += uint32(len(payload))
	if syn {
		*seq++
	}
	c.t = c.t.Add(time.Millisecond)
	data := buf.Bytes()
	return c.w.WritePacket(gopacket.CaptureInfo{Timestamp: c.t, CaptureLength: len(data), Length: len(data)}, data)
}
