package dissect

import "testing"

// TestExplain: the note of a run that showed nothing counts in words that agree with the
// counts, and says of undecrypted TLS what to do: give a key log, or the right one.
func TestExplain(t *testing.T) {
	for _, tt := range []struct {
		name     string
		seen     Seen
		ports    []string
		filtered bool
		want     string
	}{
		{"one of each", Seen{Files: 1, Packets: 1, TCP: 1, Conns: map[uint16]int{9092: 1}, Decoded: 1}, nil, true,
			"no Kafka message shown: read 1 packet (1 TCP) in 1 file, 1 TCP connection to port 9092; the filters excluded all 1 Kafka message"},
		{"several", Seen{Files: 2, Packets: 5, TCP: 4, Conns: map[uint16]int{9092: 2, 9093: 1}, Decoded: 3}, nil, false,
			"no Kafka message shown: read 5 packets (4 TCP) in 2 files, 3 TCP connections to ports 9092, 9093; 3 Kafka messages decoded, none shown"},
		{"TLS without a key log", Seen{Files: 1, Packets: 9, TCP: 9, Conns: map[uint16]int{9093: 2}, TLS: map[uint16]int{9093: 2}}, nil, false,
			"no Kafka message shown: read 9 packets (9 TCP) in 1 file, 2 TCP connections to port 9093; no Kafka request seen on any port; TLS seen on port 9093 (2 connections): try -p 9093 --tls-keylog FILE"},
		{"TLS, a key log of other sessions", Seen{Files: 1, Packets: 9, TCP: 9, Conns: map[uint16]int{9093: 1}, TLS: map[uint16]int{9093: 1}, NoSecrets: map[uint16]int{9093: 1}}, []string{"9093"}, false,
			"no Kafka message shown: read 9 packets (9 TCP) in 1 file, 1 TCP connection to port 9093; no Kafka message on the ports -p names (9093); TLS seen on port 9093 (1 connection): the key log given has no keys for this session"},
		{"TLS, a key log of some sessions", Seen{Files: 1, Packets: 9, TCP: 9, Conns: map[uint16]int{9093: 3}, TLS: map[uint16]int{9093: 3}, NoSecrets: map[uint16]int{9093: 2}}, nil, false,
			"no Kafka message shown: read 9 packets (9 TCP) in 1 file, 3 TCP connections to port 9093; no Kafka request seen on any port; TLS seen on port 9093 (3 connections): the key log given has no keys for 2 of these sessions"},
	} {
		if got := tt.seen.Explain(0, tt.ports, tt.filtered); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
