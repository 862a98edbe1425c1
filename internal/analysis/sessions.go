package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/model"
)

// FetchSessions follows the fetch sessions (KIP-227) of each connection: the table
// "fetch_sessions".
type FetchSessions struct {
	// sessions by stream and session id
	sessions map[[2]int]*session
}

// session is one fetch session as its connection followed it.
type session struct {
	requests              int
	firstEpoch, lastEpoch int32
	partitions            int
	added, forgotten      int
	refused               int
	closed                string // "", "client" or "broker"
	followed              bool   // seen from its opening, so partitions is the whole set
}

// NewFetchSessions returns the analysis of the table "fetch_sessions".
func NewFetchSessions() *FetchSessions { return &FetchSessions{sessions: map[[2]int]*session{}} }

// Add counts a fetch-session step: requests by their epochs and partitions, and the answers
// that open, refuse or close a session. A request that opens one counts when its response
// names the session.
func (s *FetchSessions) Add(e *model.Entry) {
	st := e.Session
	if st == nil || e.Msg == nil || e.Msg.APIKey < 0 {
		return
	}
	row := func(id int32) *session {
		k := [2]int{e.Stream, int(id)}
		r := s.sessions[k]
		if r == nil {
			r = &session{firstEpoch: -1, lastEpoch: -1}
			s.sessions[k] = r
		}
		return r
	}
	switch {
	case st.Response && st.ErrorCode != 0:
		r := row(st.ID)
		r.refused++
		if st.ErrorCode == codec.ErrFetchSessionIDNotFound && r.closed == "" {
			r.closed = "broker"
		}
	case st.Response && st.Action == codec.SessionOpen && st.ID != 0:
		r := row(st.ID)
		r.requests++
		r.epoch(0)
		r.partitions, r.added, r.followed = len(st.Partitions), r.added+len(st.Added), true
	case st.Response:
	case st.Action == codec.SessionIncremental:
		r := row(st.ID)
		r.requests++
		r.epoch(st.Epoch)
		if !st.Closed {
			r.partitions = len(st.Partitions)
		}
		r.added += len(st.Added)
		r.forgotten += len(st.Forgotten)
	case st.Action == codec.SessionClose:
		r := row(st.ID)
		r.requests++
		if r.closed == "" {
			r.closed = "client"
		}
	}
}

func (r *session) epoch(e int32) {
	if r.firstEpoch < 0 {
		r.firstEpoch = e
	}
	r.lastEpoch = max(r.lastEpoch, e)
}

// Tables returns the table "fetch_sessions": one row per session, by stream and id. Text
// shows the epochs as a range, and "?" for the partitions of a session that opened before
// the capture or on another connection; JSON gives the numbers and whether it was followed.
func (s *FetchSessions) Tables() []model.Table {
	t := model.Table{Name: "fetch_sessions", HideEmpty: true,
		Title: "Fetch sessions (KIP-227; partitions: the session's set after its last request, ? when it opened before the capture or elsewhere)",
		Columns: []model.Column{
			{Name: "stream", Kind: model.Int}, {Name: "session_id", Head: "session", Kind: model.Int},
			{Name: "requests", Kind: model.Int},
			{Name: "first_epoch", Kind: model.Int, Only: model.JSON}, {Name: "last_epoch", Kind: model.Int, Only: model.JSON},
			{Name: "epochs", Kind: model.String, Only: model.Text},
			{Name: "partitions", Kind: model.Int, Only: model.JSON},
			{Name: "partitions_shown", Head: "partitions", Kind: model.String, Only: model.Text},
			{Name: "added", Kind: model.Int}, {Name: "forgotten", Kind: model.Int}, {Name: "refused", Kind: model.Int},
			{Name: "closed_by", Head: "closed by", Kind: model.String},
			{Name: "followed", Kind: model.Bool, Only: model.JSON},
		}}
	for _, k := range slices.SortedFunc(maps.Keys(s.sessions), func(a, b [2]int) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}) {
		x := s.sessions[k]
		epochs := ""
		if x.firstEpoch >= 0 {
			epochs = fmt.Sprintf("%d - %d", x.firstEpoch, x.lastEpoch)
		}
		shown := "?"
		if x.followed {
			shown = strconv.Itoa(x.partitions)
		}
		t.AddRow(int64(k[0]), int64(k[1]), int64(x.requests), int64(x.firstEpoch), int64(x.lastEpoch), epochs,
			int64(x.partitions), shown, int64(x.added), int64(x.forgotten), int64(x.refused), x.closed, x.followed)
	}
	return []model.Table{t}
}
