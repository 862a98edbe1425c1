// Package pcaps holds kdissect's real captures (see README.md here) and gives one of them to
// the binary, so that `kdissect demo` works for someone who installed kdissect with go install
// and has no capture at hand.
package pcaps

import _ "embed"

// Demo is kgo-produce-fetch.pcap: a franz-go client creating a topic, producing three records
// with headers and a null key, and fetching them back from a kfake broker on 127.0.0.1:9092.
//
//go:embed kgo-produce-fetch.pcap
var Demo []byte

// DemoName is the file Demo comes from.
const DemoName = "kgo-produce-fetch.pcap"
