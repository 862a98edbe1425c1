package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// finding is a line of kdissect doctor --format json.
type finding struct {
	Kind, ID, Severity, Title, Why, Advice string
	Evidence                               struct {
		Frames, Streams []int
		Files           []string
		Count           int
		First, Last     string
	}
}

// doctorFindings runs kdissect doctor --format json with args and reads its findings.
func doctorFindings(t *testing.T, args ...string) []finding {
	t.Helper()
	out, errOut, code := kdissect(t, append([]string{"doctor", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("doctor %v: exit %d: %s", args, code, errOut)
	}
	var fs []finding
	for _, l := range lines(out) {
		var f finding
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if f.Kind != "finding" || f.ID == "" || f.Title == "" || f.Why == "" || f.Advice == "" || len(f.Evidence.Frames) == 0 {
			t.Errorf("doctor %v: an incomplete finding: %s", args, l)
		}
		fs = append(fs, f)
	}
	return fs
}

func lines(s string) []string {
	if s = strings.TrimSuffix(s, "\n"); s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// key names a finding in the tests: its id, and for errors the error's name.
func (f finding) key() string {
	if f.ID == "errors" {
		name, _, _ := strings.Cut(strings.TrimPrefix(f.Title[strings.Index(f.Title, " with ")+6:], " "), " ")
		return "errors/" + name
	}
	return f.ID
}

// messageLine is what the tests read of a line of kdissect --format json.
type messageLine struct {
	Kind       string
	Frame      int
	APIName    string `json:"api_name"`
	Errors     []string
	NoResponse bool `json:"no_response"`
	Text       string
	Fields     []fieldNode
}

type fieldNode struct {
	Name     string
	Value    any
	Children []fieldNode `json:"fields"`
}

// expectedFrames computes, from the JSON lines of a capture, the frames a finding's evidence
// must name, by its key; ok is false for keys the test does not compute.
func expectedFrames(msgs []messageLine, key string) (frames []int, ok bool) {
	_, code, isError := strings.Cut(key, "/")
	sent := map[string]int{} // a batch's first sending
	for _, m := range msgs {
		var hit bool
		switch {
		case isError:
			hit = slices.Contains(m.Errors, code)
		case key == "produce-acks-0":
			hit = m.Kind == "request" && m.NoResponse
		case key == "tls-undecrypted":
			hit = m.Kind == "notice" && strings.Contains(m.Text, ": encrypted; ")
		case key == "producer-retries":
			// A batch of a producer id whose partition and first sequence were sent before,
			// and the request that first sent it.
			if m.Kind == "request" && m.APIName == "Produce" {
				for _, b := range batches(m.Fields, nil) {
					first, again := sent[b]
					if !again {
						sent[b] = m.Frame
						continue
					}
					hit = true
					if !slices.Contains(frames, first) {
						frames = append(frames, first)
					}
				}
			}
		default:
			return nil, false
		}
		if hit && !slices.Contains(frames, m.Frame) {
			frames = append(frames, m.Frame)
		}
	}
	return frames, true
}

// batches names the record batches of a Produce request's fields: producer id, partition and
// base sequence.
func batches(nodes []fieldNode, partition any) []string {
	var out []string
	for _, n := range nodes {
		if n.Name == "Index" || n.Name == "PartitionIndex" {
			partition = n.Value
		}
	}
	var producer, sequence any
	for _, n := range nodes {
		switch n.Name {
		case "producerId":
			producer = n.Value
		case "baseSequence":
			sequence = n.Value
		}
		out = append(out, batches(n.Children, partition)...)
	}
	if producer != nil && sequence != nil {
		out = append(out, fmt.Sprint(producer, "/", partition, "/", sequence))
	}
	return out
}

// TestDoctorFindings: on real clients' captures, doctor gives the findings each shows, with
// their severities, and evidence frames that the capture's JSON lines show independently.
func TestDoctorFindings(t *testing.T) {
	for _, c := range []struct {
		capture, keylog string
		want            map[string]string // finding key: severity
	}{
		{"kgo-produce-retry.pcap", "", map[string]string{"errors/REQUEST_TIMED_OUT": "warning", "producer-retries": "warning"}},
		{"kgo-filters.pcap", "", map[string]string{"errors/UNKNOWN_TOPIC_OR_PARTITION": "warning", "produce-acks-0": "warning",
			"errors/MEMBER_ID_REQUIRED": "info", "no-compression": "info"}},
		{"kgo-fetch-session.pcap", "", map[string]string{"errors/FETCH_SESSION_ID_NOT_FOUND": "info", "errors/INVALID_FETCH_SESSION_EPOCH": "info"}},
		{"kgo-group-late-joiner.pcap", "", map[string]string{"errors/MEMBER_ID_REQUIRED": "info", "errors/REBALANCE_IN_PROGRESS": "info"}},
		{"kgo-tls13.pcap", "", map[string]string{"tls-undecrypted": "warning"}},
		{"kgo-tls13.pcap", "kgo-tls13.keylog", map[string]string{}},
	} {
		t.Run(c.capture+"+"+c.keylog, func(t *testing.T) {
			args := []string{pcap(c.capture)}
			if c.keylog != "" {
				args = append(args, "--tls-keylog", pcap(c.keylog))
			}
			fs := doctorFindings(t, args...)
			got := map[string]string{}
			for _, f := range fs {
				got[f.key()] = f.Severity
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("findings %v, want %v", got, c.want)
			}
			out, errOut, code := kdissect(t, append([]string{"--format", "json"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var msgs []messageLine
			for _, l := range lines(out) {
				var m messageLine
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, m)
			}
			for _, f := range fs {
				want, ok := expectedFrames(msgs, f.key())
				slices.Sort(want)
				if ok && !slices.Equal(f.Evidence.Frames, want) {
					t.Errorf("%s: frames %v, want %v", f.key(), f.Evidence.Frames, want)
				}
			}
		})
	}
}

// cleanCaptures are the captures of pcaps/ that show no problem: real clients doing what
// they should against a healthy broker, read with their key logs when they are TLS. Not
// clean: kgo-produce-retry (a produce timed out and was retried), kgo-filters (Produce
// requests with acks=0, a topic that did not exist), other-tls (HTTPS: TLS that kdissect
// cannot tell from Kafka's, and cannot decrypt).
func cleanCaptures(t *testing.T) [][]string {
	t.Helper()
	notClean := []string{"kgo-produce-retry.pcap", "kgo-filters.pcap", "other-tls.pcap"}
	var out [][]string
	for _, f := range captures(t) {
		if slices.Contains(notClean, filepath.Base(f)) {
			continue
		}
		args := []string{f}
		if keylog := strings.TrimSuffix(f, filepath.Ext(f)) + ".keylog"; fileExists(keylog) {
			args = append(args, "--tls-keylog", keylog)
		}
		out = append(out, args)
	}
	return out
}

// TestDoctorClean: no capture that shows no problem gives a warning or an error: false alarms
// are defects.
func TestDoctorClean(t *testing.T) {
	for _, args := range cleanCaptures(t) {
		for _, f := range doctorFindings(t, args...) {
			if f.Severity != "info" {
				t.Errorf("%s: %s %s: %s", filepath.Base(args[0]), f.Severity, f.ID, f.Title)
			}
		}
	}
}

// TestFindingsAfterMessages: --findings prints, after a capture's messages, the findings
// doctor gives of the capture (as JSON lines with --format json, a table otherwise).
func TestFindingsAfterMessages(t *testing.T) {
	name := pcap("kgo-produce-retry.pcap")
	doctor, _, _ := kdissect(t, "doctor", "--format", "json", name)
	plain, _, _ := kdissect(t, "--format", "json", name)
	out, errOut, code := kdissect(t, "--format", "json", "--findings", name)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != plain+doctor || doctor == "" {
		t.Errorf("--findings: the messages then the findings expected; got the last lines\n%s", out[max(0, len(out)-2000):])
	}
	table, _, _ := kdissect(t, "doctor", name)
	summary, _, _ := kdissect(t, "--format", "summary", name)
	out, _, _ = kdissect(t, "--format", "summary", "--findings", name)
	if out != summary+"\n"+table || !strings.Contains(table, "producer-retries") {
		t.Errorf("--findings --format summary: the messages, a blank line, then doctor's table expected; got\n%s", out)
	}
}

// TestDoctorUnreadable: a capture that cannot be read gets no findings, not "no findings": the
// error names it and the exit status is 1.
func TestDoctorUnreadable(t *testing.T) {
	for _, args := range [][]string{
		{"doctor", filepath.Join(t.TempDir(), "missing.pcap")},
		{"doctor", filepath.Join("..", "..", "README.md")},
		{"doctor", "--format", "json", filepath.Join(t.TempDir(), "missing.pcap")},
	} {
		out, errOut, code := kdissect(t, args...)
		if out != "" || code != 1 || !strings.Contains(errOut, filepath.Base(args[len(args)-1])) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, the file named", args, code, out, errOut)
		}
	}
}

// TestFindingsFlagAsDoctor: --findings finds what the doctor command finds, notices included
// (lost bytes, TLS not decrypted), on every capture in pcaps/, with or without its key log.
func TestFindingsFlagAsDoctor(t *testing.T) {
	names, err := filepath.Glob(filepath.Join("..", "..", "pcaps", "*.pcap*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no captures in pcaps/: %v", err)
	}
	fromNotices := 0
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			doctor, errOut, code := kdissect(t, "doctor", name)
			if code != 0 {
				t.Fatalf("doctor: exit %d: %s", code, errOut)
			}
			flag, errOut, code := kdissect(t, "--format", "none", "--findings", name)
			if code != 0 {
				t.Fatalf("--findings: exit %d: %s", code, errOut)
			}
			if flag != doctor {
				t.Errorf("--format none --findings:\n%s\ndoctor:\n%s", flag, doctor)
			}
			if strings.Contains(doctor, " capture-loss ") || strings.Contains(doctor, " tls-undecrypted ") {
				fromNotices++
			}
		})
	}
	if fromNotices == 0 {
		t.Errorf("no capture has a finding of notices: the test compares nothing that notices find")
	}
}

// TestDoctorHelp: doctor --help shows the flags that choose and read the messages, and its own
// --format, not the flags of the messages' output, which it does not show.
func TestDoctorHelp(t *testing.T) {
	out, errOut, code := kdissect(t, "doctor", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, flag := range []string{"--hex", "--explain", "--max-bytes", "--records", "--time", "--show-secrets",
		"--max-messages", "--output", "--write", "--findings", "--stats", "--no-fields", "--rotate", "--version", "diagram"} {
		if strings.Contains(out, flag) {
			t.Errorf("doctor --help shows %s:\n%s", flag, out)
		}
	}
	for _, flag := range []string{"--display-filter", "--tls-keylog", "--port", "--read", "--count", "--schema-dir"} {
		if !strings.Contains(out, flag) {
			t.Errorf("doctor --help lacks %s:\n%s", flag, out)
		}
	}
	if !regexp.MustCompile(`--format string +how the findings are written: table \(.*\), or json \(.*\) \(default "table"\)`).MatchString(out) {
		t.Errorf("doctor --help: --format is not the findings' table or json, table by default:\n%s", out)
	}
	for _, format := range []string{"table", "json"} {
		if _, errOut, code := kdissect(t, "doctor", "--format", format, pcap("kgo-lag.pcap")); code != 0 {
			t.Errorf("doctor --format %s: exit %d: %s", format, code, errOut)
		}
	}
	if _, errOut, code := kdissect(t, "doctor", "--format", "summary", pcap("kgo-lag.pcap")); code != 2 || !strings.Contains(errOut, "table or json") {
		t.Errorf("doctor --format summary: exit %d: %s", code, errOut)
	}
}

// TestDoctorText: the doctor's text, read on an 80-column terminal: each finding's title, its
// frames, why and advice under it, wrapped (golden files: go test -run TestDoctorText -update).
func TestDoctorText(t *testing.T) {
	for _, name := range []string{"kgo-filters.pcap", "kgo-produce-retry.pcap", "kgo-tls13.pcap"} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := kdissect(t, "doctor", pcap(name))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for i, l := range lines(out) {
				if w := utf8.RuneCountInString(l); w > 80 {
					t.Errorf("line %d is %d columns wide:\n%s", i+1, w, l)
				}
			}
			golden(t, "doctor-"+strings.TrimSuffix(name, ".pcap")+".txt", []byte(out))
		})
	}
}

// TestDoctorSeveralFiles: with several captures, the evidence names each frame's file ("files"
// in JSON, beside "frames"; the file before its frames in the text), and the frames of an
// error found in two files are those each file gives alone.
func TestDoctorSeveralFiles(t *testing.T) {
	names := []string{pcap("kgo-filters.pcap"), pcap("kgo-group-late-joiner.pcap")}
	// errorFrames are the frames of each error finding, as "file frame".
	errorFrames := func(fs []finding, file string) map[string][]string {
		out := map[string][]string{}
		for _, f := range fs {
			if f.ID != "errors" {
				continue
			}
			for i, frame := range f.Evidence.Frames {
				name := file
				if f.Evidence.Files != nil {
					name = f.Evidence.Files[i]
				}
				out[f.key()] = append(out[f.key()], fmt.Sprint(name, " ", frame))
			}
		}
		return out
	}
	alone := map[string][]string{}
	for _, name := range names {
		fs := doctorFindings(t, name)
		for _, f := range fs {
			if f.Evidence.Files != nil {
				t.Errorf("%s alone: files %v", name, f.Evidence.Files)
			}
		}
		for k, frames := range errorFrames(fs, name) {
			alone[k] = append(alone[k], frames...)
		}
	}
	fs := doctorFindings(t, names...)
	both := errorFrames(fs, "")
	for _, f := range fs {
		if len(f.Evidence.Files) != len(f.Evidence.Frames) {
			t.Errorf("%s: %d files for %d frames", f.key(), len(f.Evidence.Files), len(f.Evidence.Frames))
		}
	}
	spans := false
	for k, frames := range alone {
		slices.Sort(frames)
		got := slices.Sorted(slices.Values(both[k]))
		if !slices.Equal(got, frames) {
			t.Errorf("%s: frames %v in both files, %v in each alone", k, got, frames)
		}
		spans = spans || !strings.HasPrefix(frames[len(frames)-1], strings.Fields(frames[0])[0])
	}
	if !spans {
		t.Errorf("no error is found in both files: the test shows nothing of several files")
	}
	text, _, _ := kdissect(t, append([]string{"doctor"}, names...)...)
	if !strings.Contains(text, "frames  "+names[0]+" ") || !strings.Contains(text, names[1]+" ") {
		t.Errorf("the text does not name the files before their frames:\n%s", text)
	}
}
