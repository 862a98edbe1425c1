package dissect

// Tests of fetch sessions (KIP-227, issue 17 part 5) on real captures. The expected sessions are
// computed here from the field trees of an unfiltered JSON run, by a model of KIP-227 written
// for the test: epoch 0 opens a session whose id the response gives, a positive epoch names the
// changes to it, epoch -1 closes it.

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

// sessionJSON is the "fetch_session" key of a JSON line.
type sessionJSON struct {
	SessionID  int32           `json:"session_id"`
	Epoch      int32           `json:"epoch"`
	Action     string          `json:"action"`
	ErrorCode  *int16          `json:"error_code"`
	Added      []partitionJSON `json:"added"`
	Updated    []partitionJSON `json:"updated"`
	Forgotten  []partitionJSON `json:"forgotten"`
	Partitions []partitionJSON `json:"partitions"`
	Followed   bool            `json:"followed"`
	Closed     bool            `json:"closed"`
}

type partitionJSON struct {
	Topic     string `json:"topic"`
	TopicID   string `json:"topic_id"`
	Partition int32  `json:"partition"`
}

func (p partitionJSON) String() string {
	return fmt.Sprintf("%s/%s[%d]", p.Topic, p.TopicID, p.Partition)
}

func partitionStrings(ps []partitionJSON) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.String())
	}
	sort.Strings(out)
	return out
}

// requestPartitions reads, from a Fetch request's tree, the partitions of an array of topics
// (Topics or ForgottenTopicsData), with the names the topic ids' notes give.
func requestPartitions(m *jsonMsg, array string) []partitionJSON {
	arr := field(m.Fields, array)
	if arr == nil {
		return nil
	}
	var out []partitionJSON
	for _, t := range arr.Fields {
		var topic partitionJSON
		for _, c := range t.Fields {
			switch c.Name {
			case "Topic":
				topic.Topic, _ = str(c)
			case "TopicId":
				topic.TopicID, _ = c.Value.(string)
				if strings.HasPrefix(c.Note, "topic ") {
					topic.Topic = strings.TrimPrefix(c.Note, "topic ")
				}
			}
		}
		for _, c := range t.Fields {
			if c.Name != "Partitions" {
				continue
			}
			for _, p := range c.Fields {
				sp := topic
				v, ok := intValue(p)
				if pf := field(p.Fields, "Partition"); pf != nil {
					v, ok = intValue(pf)
				}
				if ok {
					sp.Partition = int32(v)
					out = append(out, sp)
				}
			}
		}
	}
	return out
}

// rawSessions reads the "fetch_session" key of each JSON line, by packet.
func rawSessions(t *testing.T, out string) map[int]*sessionJSON {
	t.Helper()
	got := map[int]*sessionJSON{}
	for _, l := range strings.Split(out, "\n") {
		var line struct {
			Frame   int          `json:"frame"`
			Session *sessionJSON `json:"fetch_session"`
		}
		if l == "" || json.Unmarshal([]byte(l), &line) != nil || line.Session == nil {
			continue
		}
		got[line.Frame] = line.Session
	}
	return got
}

func TestFetchSessions(t *testing.T) {
	// sarama fetches without sessions: none is shown.
	sessionless := map[string]bool{"sarama-produce-consume.pcap": true}
	for _, name := range []string{"kgo-fetch-session.pcap", "kgo-group-3brokers.pcap", "kgo-produce-fetch.pcap", "sarama-produce-consume.pcap"} {
		t.Run(name, func(t *testing.T) {
			file := pcapPath(name)
			out, errOut, code := testRun{format: "json", ports: pcaps.Ports, stats: true}.dissect(t, file)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got := rawSessions(t, out)
			msgs := parseJSON(t, out)

			// The model: per stream, the open sessions' partitions and epochs, and the closed ones.
			type session struct {
				set   map[string]partitionJSON
				epoch int32
			}
			type streamState struct {
				open   map[int32]*session
				closed map[int32]bool
			}
			streams := map[int]*streamState{}
			type want struct {
				id, epoch        int32
				action           string
				added, forgotten []string
				set              []string // nil: not followed
				warned           bool
			}
			pending := map[[2]int]want{}   // stream, correlation id
			next := map[[2]int]*session{}  // the session as the request leaves it
			wants := map[int]want{}        // by packet
			rows := map[[2]int32]*[4]int{} // stream, session: requests, added, forgotten, refused
			sessionsSeen, forgets, adds, warnings := 0, 0, 0, 0
			for _, m := range msgs {
				if m.APIName != "Fetch" || m.version() < 7 || m.Kind != "request" && m.Kind != "response" {
					continue
				}
				st := streams[m.Stream]
				if st == nil {
					st = &streamState{open: map[int32]*session{}, closed: map[int32]bool{}}
					streams[m.Stream] = st
				}
				key := [2]int{m.Stream, int(*m.CorrelationID)}
				row := func(id int32) *[4]int {
					k := [2]int32{int32(m.Stream), id}
					if rows[k] == nil {
						rows[k] = &[4]int{}
					}
					return rows[k]
				}
				if m.Kind == "request" {
					idv, _ := intValue(field(m.Fields, "SessionId"))
					ev, _ := intValue(field(m.Fields, "SessionEpoch"))
					id, epoch := int32(idv), int32(ev)
					if epoch == -1 && id == 0 {
						if got[m.Frame] != nil {
							t.Errorf("#%d: a fetch without a session has a fetch_session: %+v", m.Frame, got[m.Frame])
						}
						continue
					}
					listed := requestPartitions(m, "Topics")
					forgotten := requestPartitions(m, "ForgottenTopicsData")
					w := want{id: id, epoch: epoch}
					switch {
					case epoch == 0:
						w.action, w.id = "open", 0
						s := &session{set: map[string]partitionJSON{}}
						for _, p := range listed {
							s.set[p.String()] = p
							w.added = append(w.added, p.String())
						}
						next[key] = s
					case epoch == -1:
						w.action = "close"
						row(id)[0]++
					default:
						w.action = "incremental"
						row(id)[0]++
						if st.closed[id] {
							w.warned = true
							break
						}
						cur := st.open[id]
						s := &session{set: map[string]partitionJSON{}, epoch: epoch}
						if cur != nil {
							for k, p := range cur.set {
								s.set[k] = p
							}
							if epoch != cur.epoch+1 {
								w.warned = true
							}
						}
						for _, p := range listed {
							if _, ok := s.set[p.String()]; !ok {
								w.added = append(w.added, p.String())
							}
							s.set[p.String()] = p
						}
						for _, p := range forgotten {
							delete(s.set, p.String())
							w.forgotten = append(w.forgotten, p.String())
						}
						if cur != nil {
							next[key] = s
						}
					}
					if n := next[key]; n != nil {
						w.set = []string{}
						for k := range n.set {
							w.set = append(w.set, k)
						}
						sort.Strings(w.set)
					}
					row(id)[1] += len(w.added)
					row(id)[2] += len(w.forgotten)
					sort.Strings(w.added)
					sort.Strings(w.forgotten)
					wants[m.Frame] = w
					pending[key] = w
					continue
				}
				w, ok := pending[key]
				if !ok {
					continue
				}
				delete(pending, key)
				n := next[key]
				delete(next, key)
				ec, _ := intValue(field(m.Fields, "ErrorCode"))
				sid, _ := intValue(field(m.Fields, "SessionId"))
				rw := want{id: w.id, epoch: w.epoch, action: w.action}
				switch {
				case ec == 70:
					rw.warned = true
					delete(st.open, w.id)
					st.closed[w.id] = true
					row(w.id)[3]++
				case ec == 71:
					rw.warned = true
					row(w.id)[3]++
				case w.action == "open" && sid != 0:
					rw.id = int32(sid)
					st.open[rw.id], st.closed[rw.id] = n, false
					n.epoch = 0
					row(rw.id)[0]++
					row(rw.id)[1] += len(w.added)
					sessionsSeen++
				case w.action == "close":
					delete(st.open, w.id)
					st.closed[w.id] = true
				case w.action == "incremental" && n != nil:
					st.open[w.id] = n
				}
				wants[m.Frame] = rw
			}
			for frame, w := range wants {
				g := got[frame]
				if g == nil {
					t.Errorf("#%d: no fetch_session, want %+v", frame, w)
					continue
				}
				if g.SessionID != w.id || g.Epoch != w.epoch || g.Action != w.action {
					t.Errorf("#%d: session %d epoch %d %s, want %d %d %s", frame, g.SessionID, g.Epoch, g.Action, w.id, w.epoch, w.action)
				}
				if g.ErrorCode == nil { // a request
					if a := partitionStrings(g.Added); !slices.Equal(a, nonNil(w.added)) {
						t.Errorf("#%d: added %v, want %v", frame, a, w.added)
					}
					if f := partitionStrings(g.Forgotten); !slices.Equal(f, nonNil(w.forgotten)) {
						t.Errorf("#%d: forgotten %v, want %v", frame, f, w.forgotten)
					}
					if w.set != nil && !g.Closed {
						if !g.Followed {
							t.Errorf("#%d: not followed", frame)
						}
						if p := partitionStrings(g.Partitions); !slices.Equal(p, w.set) {
							t.Errorf("#%d: session's partitions %v, want %v", frame, p, w.set)
						}
					}
					forgets += len(w.forgotten)
					if w.action == "incremental" {
						adds += len(w.added)
					}
				}
			}
			// Warnings: on the requests and responses the model says misuse a session, only them.
			for _, m := range msgs {
				if m.APIName != "Fetch" || m.Kind == "stats" {
					continue
				}
				var warns []any
				json.Unmarshal([]byte(m.raw), &struct {
					W *[]any `json:"warnings"`
				}{&warns})
				if (len(warns) > 0) != wants[m.Frame].warned {
					t.Errorf("#%d: warnings %v, want warned %v", m.Frame, warns, wants[m.Frame].warned)
				}
				if len(warns) > 0 {
					warnings++
				}
			}
			// The statistics: one row per session.
			var gotRows []string
			for _, l := range strings.Split(out, "\n") {
				var r struct {
					Table     string `json:"table"`
					Stream    int32  `json:"stream"`
					SessionID int32  `json:"session_id"`
					Requests  int    `json:"requests"`
					Added     int    `json:"added"`
					Forgotten int    `json:"forgotten"`
					Refused   int    `json:"refused"`
				}
				if json.Unmarshal([]byte(l), &r) == nil && r.Table == "fetch_sessions" {
					gotRows = append(gotRows, fmt.Sprint(r.Stream, r.SessionID, r.Requests, r.Added, r.Forgotten, r.Refused))
				}
			}
			var wantRows []string
			for k, r := range rows {
				if k[1] != 0 {
					wantRows = append(wantRows, fmt.Sprint(k[0], k[1], r[0], r[1], r[2], r[3]))
				}
			}
			sort.Strings(gotRows)
			sort.Strings(wantRows)
			if !slices.Equal(gotRows, wantRows) {
				t.Errorf("fetch_sessions rows\n%v, want\n%v", gotRows, wantRows)
			}
			if (sessionsSeen == 0) != sessionless[name] || sessionless[name] && len(got) > 0 {
				t.Errorf("%d fetch sessions opened, %d messages with a fetch_session", sessionsSeen, len(got))
			}
			if name == "kgo-fetch-session.pcap" && (forgets == 0 || adds == 0 || warnings != 4) {
				t.Errorf("%d partitions forgotten, %d added by incremental requests, %d messages warned; want some, some and 4", forgets, adds, warnings)
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
