package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStatsAddUp: each row of the apis table adds up, requests = responses + unanswered +
// no_response, and its counts are those of the message lines printed before it, on captures
// where every response has its request (kgo-filters.pcap has Produce requests with acks=0).
func TestStatsAddUp(t *testing.T) {
	for _, name := range []string{"kgo-filters.pcap", "kgo-produce-fetch.pcap", "sarama-produce-consume.pcap"} {
		out, errOut, code := kdissect(t, "--format", "json", "--stats", pcap(name))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		type key struct{ api, version int16 }
		type counts struct{ requests, responses, unanswered, noResponse int }
		fromMessages, fromStats := map[key]*counts{}, map[key]*counts{}
		noResponses := 0
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var v struct {
				Kind, Table         string
				APIKey              *int16 `json:"api_key"`
				APIVersion          int16  `json:"api_version"`
				RequestFrame        int    `json:"request_frame"`
				Requests, Responses int
				Unanswered          int
				// NoResponse is a flag in a message line, a count in a stats line.
				NoResponse any `json:"no_response"`
			}
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: %v: %s", name, err, l)
			}
			if v.APIKey == nil || *v.APIKey < 0 {
				continue // a SASL token, a response of no known request
			}
			k := key{*v.APIKey, v.APIVersion}
			switch v.Kind {
			case "stats":
				if v.Table != "apis" {
					continue
				}
				n, _ := v.NoResponse.(float64)
				fromStats[k] = &counts{v.Requests, v.Responses, v.Unanswered, int(n)}
				continue
			case "response":
				if v.RequestFrame == 0 {
					t.Fatalf("%s: a response without its request; the capture does not fit the test: %s", name, l)
				}
			}
			c := fromMessages[k]
			if c == nil {
				c = &counts{}
				fromMessages[k] = c
			}
			if v.Kind == "request" {
				c.requests++
			} else {
				c.responses++
			}
			if v.NoResponse == true {
				c.noResponse++
				noResponses++
			}
		}
		if name == "kgo-filters.pcap" && noResponses == 0 {
			t.Errorf("%s: no request is marked no_response", name)
		}
		if len(fromStats) != len(fromMessages) {
			t.Errorf("%s: %d rows in the apis table, %d APIs and versions in the messages", name, len(fromStats), len(fromMessages))
		}
		for k, s := range fromStats {
			m := fromMessages[k]
			if m == nil {
				t.Errorf("%s: %+v: a row and no message", name, k)
				continue
			}
			if s.requests != m.requests || s.responses != m.responses || s.noResponse != m.noResponse {
				t.Errorf("%s: %+v: the row counts %+v, the messages %+v", name, k, *s, *m)
			}
			if s.requests != s.responses+s.unanswered+s.noResponse {
				t.Errorf("%s: %+v: requests %d != responses %d + unanswered %d + no_response %d", name, k,
					s.requests, s.responses, s.unanswered, s.noResponse)
			}
		}
	}
}
