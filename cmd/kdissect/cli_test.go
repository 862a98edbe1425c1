package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	flag "github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec"
	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/cli"
)

// kdissectStdin is kdissect with stdin.
func kdissectStdin(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestFlagErrors: every flag error of every subcommand is said on stderr, names the flag, points
// to that subcommand's --help, prints nothing on stdout, and exits 2.
func TestFlagErrors(t *testing.T) {
	file := pcap("kgo-produce-fetch.pcap")
	for _, tt := range []struct {
		args []string
		sub  string // the subcommand whose --help is pointed to
		flag string // what the message names
	}{
		{[]string{"--bogus", file}, "", "--bogus"},
		{[]string{"-Z", file}, "", "-Z"},
		{[]string{"--min-latency", "abc", file}, "", "--min-latency"},
		{[]string{"--workers", "x", file}, "", "--workers"},
		{[]string{"schema", "--bogus"}, "schema", "--bogus"},
		{[]string{"schema", "Fetch", "--version", "x"}, "schema", "--version"},
		{[]string{"decode", "--bogus"}, "decode", "--bogus"},
		{[]string{"live", "-c", "abc"}, "live", "--count"},
		{[]string{"live", "--bogus"}, "live", "--bogus"},
		{[]string{"errors", "--json"}, "errors", "--json"},
		{[]string{"demo", "--bogus"}, "demo", "--bogus"},
		{[]string{"version", "--bogus"}, "version", "--bogus"},
		{[]string{"help", "--bogus"}, "help", "--bogus"},
		// A flag before the subcommand is the subcommand's: its error too.
		{[]string{"--bogus", "schema", "Fetch"}, "schema", "--bogus"},
		{[]string{"--format", "summary", "errors"}, "errors", "--format"},
	} {
		out, errOut, code := kdissect(t, tt.args...)
		help := "Run 'kdissect --help' for usage."
		if tt.sub != "" {
			help = "Run 'kdissect " + tt.sub + " --help' for usage."
		}
		if code != cli.ExitUsage || out != "" || !strings.HasPrefix(errOut, "kdissect: ") ||
			!strings.Contains(errOut, tt.flag) || !strings.Contains(errOut, help) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and a message naming %s with %q",
				tt.args, code, out, errOut, tt.flag, help)
		}
	}
}

// TestMissingCapture: a capture that does not exist is named (exit 1); a first argument that is
// a word, neither a subcommand nor a file, is a mistyped subcommand (exit 2), the nearest one
// suggested, before any flag of the main command is parsed; a word that is a file is read.
func TestMissingCapture(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"shema", "Fetch"}, cli.ExitUsage, `kdissect: no subcommand "shema", and no file of that name: did you mean schema?`},
		{[]string{"lve", "-i", "lo"}, cli.ExitUsage, `kdissect: no subcommand "lve", and no file of that name: did you mean live?`},
		{[]string{"-p", "9092", "verison"}, cli.ExitUsage, "did you mean version?"},
		{[]string{"sch"}, cli.ExitUsage, "did you mean schema?"},
		{[]string{"xyzzy"}, cli.ExitUsage, `kdissect: no subcommand "xyzzy", and no file of that name` + "\nRun 'kdissect --help' for usage."},
		{[]string{"./shema"}, cli.ExitFailure, "kdissect: open ./shema: no such file or directory"},
		{[]string{"nofile.pcap"}, cli.ExitFailure, "kdissect: open nofile.pcap: no such file or directory"},
	} {
		out, errOut, code := kdissect(t, tt.args...)
		if code != tt.code || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("kdissect %q: exit %d, stdout %q, stderr %q; want exit %d and %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
	// A capture named like a word is read, mistyped subcommand or not.
	data, err := os.ReadFile(pcap("kgo-produce-fetch.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := kdissect(t, "--format", "summary", pcap("kgo-produce-fetch.pcap"))
	t.Chdir(t.TempDir())
	if err := os.WriteFile("shema", data, 0o666); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := kdissect(t, "--format", "summary", "shema"); code != 0 || out != want || errOut != "" {
		t.Errorf("a capture named shema: exit %d, stderr %q, stdout as the capture's %v", code, errOut, out == want)
	}
}

// TestNegativeErrorCode: a negative error code is an argument, not a flag, and a negative flag
// value is still its flag's.
func TestNegativeErrorCode(t *testing.T) {
	out, errOut, code := kdissect(t, "errors", "-1", "3")
	if code != 0 || errOut != "" || !strings.Contains(out, "│   -1 │ UNKNOWN_SERVER_ERROR ") || !strings.Contains(out, " 3 │ UNKNOWN_TOPIC_OR_PARTITION ") {
		t.Errorf("errors -1 3: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	if _, errOut, code := kdissect(t, "errors", "-2"); code != cli.ExitUsage || !strings.Contains(errOut, `no Kafka error has the code or name "-2"`) {
		t.Errorf("errors -2: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := kdissect(t, "schema", "Fetch", "--version", "-1"); code != cli.ExitUsage || !strings.Contains(errOut, "--version -1: cannot be negative") {
		t.Errorf("schema Fetch --version -1: exit %d, stderr %q", code, errOut)
	}
}

// TestMistypedNames: a mistyped API or error name is a usage error that suggests the nearest
// name; one near nothing suggests none.
func TestMistypedNames(t *testing.T) {
	file := pcap("kgo-produce-fetch.pcap")
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"schema", "Fecth"}, `no API named "Fecth": did you mean Fetch?`},
		{[]string{"--api", "Prodce", file}, `--api: no API named "Prodce": did you mean Produce?`},
		{[]string{"errors", "NOT_LEADER"}, `no Kafka error has the code or name "NOT_LEADER": did you mean NOT_LEADER_OR_FOLLOWER?`},
		{[]string{"schema", "Xyzzyplugh"}, `no API named "Xyzzyplugh"` + "\n"},
	} {
		out, errOut, code := kdissect(t, tt.args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.msg)
		}
	}
}

// TestBadValues: negative and empty values are refused with a message, in every subcommand.
func TestBadValues(t *testing.T) {
	file := pcap("kgo-produce-fetch.pcap")
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--max-bytes", "-1", file}, "--max-bytes -1: cannot be negative"},
		{[]string{"--max-decompressed", "-5", file}, "--max-decompressed -5: cannot be negative"},
		{[]string{"--stream", "-7", file}, "--stream -7: cannot be negative"},
		{[]string{"--correlation-id", "-2", file}, "--correlation-id -2: cannot be negative"},
		{[]string{"--min-latency", "-5ms", file}, "--min-latency -5ms: cannot be negative"},
		{[]string{"-p", "", file}, "--port: empty value"},
		{[]string{"-p", ",", file}, "--port: empty value"},
		{[]string{"--topic", "", file}, "--topic: empty value"},
		{[]string{"--format", "", file}, "--format: empty value"},
		{[]string{"--workers", "0", file}, "--workers 0: at least 1"},
		{[]string{"--api-key", "-4", file}, "--api-key -4: cannot be negative"},
		{[]string{"schema", "Fetch", "--version", "-3"}, "--version -3: cannot be negative"},
		{[]string{"decode", "--api", "Fetch", "--api-version", "-1"}, "--api-version -1: cannot be negative"},
		{[]string{"decode", "--max-bytes", "-1"}, "--max-bytes -1: cannot be negative"},
		{[]string{"live", "-i", "lo", "-c", "-1"}, "--count -1: cannot be negative"},
		{[]string{"live", "-i", "lo", "--duration", "-1s"}, "--duration -1s: cannot be negative"},
		{[]string{"live", "-i", "lo", "-p", ""}, "--port: empty value"},
		{[]string{"live", "-i", ""}, "--interface: empty value"},
		// Parquet is refused for what it is, with advice to give -o DIR/, not -o FILE.
		{[]string{"live", "-i", "lo", "--format", "parquet"}, "--format parquet writes its output only at the end: give -o DIR/"},
		{[]string{"live", "-i", "lo", "--rotate", "2s"}, "--rotate, --rotate-size, --keep and --keep-size write files in a directory: give -o DIR/ or -w DIR/"},
		{[]string{"live", "-i", "lo", "--rotate", "-2s", "-o", t.TempDir()}, "--rotate -2s: cannot be negative"},
		{[]string{"live", "-i", "lo", "--keep", "2", "-o", t.TempDir()}, "--keep and --keep-size go with --rotate or --rotate-size"},
		{[]string{"live", "-i", "lo", "--keep", "-1", "--rotate", "1h", "-o", t.TempDir()}, "--keep -1: cannot be negative"},
		{[]string{"live", "-i", "lo", "--rotate-size", "12XB"}, `invalid argument "12XB" for "--rotate-size" flag: "12XB": unknown unit "XB"`},
		{[]string{"live", "-i", "lo", "--ring", "64MB", "-o", t.TempDir()}, "--ring SIZE and --save-on EXPR go together"},
		{[]string{"live", "-i", "lo", "--ring", "64MB", "--save-on", "len(errors) > 0"}, "--save-on saves files in a directory: give -o DIR/"},
		{[]string{"live", "-i", "lo", "--ring", "64MB", "--save-on", "latency_ms >", "-o", t.TempDir()}, "--save-on: "},
		{[]string{"live", "-i", "lo", "-o", file}, "-o: " + file + " is not a directory"},
		{[]string{"live", "-i", "lo", "-o", "/nonexistent/none"}, "-o: no directory /nonexistent/none (a name ending in / makes one)"},
		{[]string{"live", "-i", "lo", "--save-after", "-1s", "--ring", "1MB", "--save-on", "true", "-o", t.TempDir()}, "--save-after -1s: cannot be negative"},
	} {
		out, errOut, code := kdissect(t, tt.args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "kdissect: "+tt.msg) || !strings.Contains(errOut, "--help' for usage.") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.msg)
		}
	}
}

// TestHelp: --help and -h of every subcommand print its own usage and description on stdout,
// with its flags, and exit 0; "kdissect help SUB" prints the same.
func TestHelp(t *testing.T) {
	cmds := append(subcommands(), captureCommand())
	for _, c := range cmds {
		var args []string
		if c.Name != "" {
			args = append(args, c.Name)
		}
		for _, h := range []string{"--help", "-h"} {
			out, errOut, code := kdissect(t, append(args, h)...)
			if code != cli.ExitOK || errOut != "" {
				t.Errorf("%q %s: exit %d, stderr %q", args, h, code, errOut)
				continue
			}
			if !strings.HasPrefix(out, "Usage:\n  "+c.Usage+"\n\n"+c.About+"\n") {
				t.Errorf("%q %s: the usage does not start with its own synopsis and description:\n%s", args, h, out)
			}
			if strings.Contains(out, "(default -1)") || strings.Contains(out, "Usage of") {
				t.Errorf("%q %s: pflag's defaults shown:\n%s", args, h, out)
			}
			c.Flags().VisitAll(func(f *flag.Flag) {
				if !f.Hidden && !strings.Contains(out, "--"+f.Name) {
					t.Errorf("%q %s: flag --%s not shown", args, h, f.Name)
				}
			})
		}
		if c.Name != "" {
			out, _, code := kdissect(t, "help", c.Name)
			want, _, _ := kdissect(t, c.Name, "--help")
			if code != cli.ExitOK || out != want {
				t.Errorf("help %s: exit %d, and not the same as %s --help:\n%s", c.Name, code, c.Name, out)
			}
		}
	}
	// decode has no --stats: its --format does not mention it.
	out, _, _ := kdissect(t, "decode", "--help")
	if strings.Contains(out, "--stats") {
		t.Errorf("decode --help mentions --stats:\n%s", out)
	}
	// The top usage lists every subcommand.
	out, _, _ = kdissect(t, "--help")
	for _, c := range subcommands() {
		if synopsis, _, _ := strings.Cut(c.Usage, "\n"); !strings.Contains(out, "  "+synopsis) {
			t.Errorf("kdissect --help does not list %s", c.Name)
		}
	}
}

// TestFindSubcommand: the subcommand is the first argument that is not a flag or a flag's value.
func TestFindSubcommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		name string
		rest string
	}{
		{[]string{"schema", "Fetch"}, "schema", "[Fetch]"},
		{[]string{"--schema-dir", "D", "schema", "Fetch"}, "schema", "[--schema-dir D Fetch]"},
		{[]string{"--schema-dir=D", "schema"}, "schema", "[--schema-dir=D]"},
		{[]string{"-p", "9092", "live", "-i", "lo"}, "live", "[-p 9092 -i lo]"},
		{[]string{"-xp", "9092", "demo"}, "demo", "[-xp 9092]"},
		{[]string{"-p9092", "demo"}, "demo", "[-p9092]"},
		{[]string{"--hex", "decode", "f"}, "decode", "[--hex f]"},
		{[]string{"f.pcap", "schema"}, "", "[f.pcap schema]"},
		{[]string{"--", "schema"}, "", "[-- schema]"},
		{[]string{"-r", "schema"}, "", "[-r schema]"},
		{[]string{"--version"}, "", "[--version]"},
		{[]string{"version"}, "version", "[]"},
		{nil, "", "[]"},
	} {
		c, rest := program().Find(tt.args)
		if c.Name != tt.name || fmt.Sprint(rest) != tt.rest {
			t.Errorf("%q: subcommand %q with %v, want %q with %s", tt.args, c.Name, rest, tt.name, tt.rest)
		}
	}
}

// TestVersion: --version and version print the module version and VCS revision from the build
// info, and the newest versions the built-in definitions know.
func TestVersion(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	apis := set.APIs()
	last := apis[len(apis)-1]
	want := []string{
		fmt.Sprintf("Produce v%d", set.API(0).Versions().Latest()),
		fmt.Sprintf("Fetch v%d", set.API(1).Versions().Latest()),
		fmt.Sprintf("keys 0 to %d", last.Key),
		last.Name,
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errOut, code := kdissect(t, args...)
		if code != cli.ExitOK || errOut != "" || !strings.HasPrefix(out, "kdissect ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: no %q in:\n%s", args, w, out)
			}
		}
	}
	// The text from a build's info is internal/cli's TestVersion.
}

// TestReadFlagAndStdin: -r FILE (repeatable) and - read captures, stdin gzipped or not, and give
// what naming the files gives.
func TestReadFlagAndStdin(t *testing.T) {
	file := pcap("kgo-produce-fetch.pcap")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	want, _, code := kdissect(t, "--format", "summary", file)
	if code != 0 || want == "" {
		t.Fatalf("exit %d", code)
	}
	for _, tt := range []struct {
		name  string
		stdin []byte
		args  []string
	}{
		{"-r", nil, []string{"--format", "summary", "-r", file}},
		{"- plain", data, []string{"--format", "summary", "-"}},
		{"- gzipped", gz.Bytes(), []string{"--format", "summary", "-"}},
		{"-r -", gz.Bytes(), []string{"-r", "-", "--format", "summary"}},
	} {
		out, errOut, code := kdissectStdin(t, tt.stdin, tt.args...)
		if code != 0 || errOut != "" || out != want {
			t.Errorf("%s: exit %d, stderr %q, output the same: %v", tt.name, code, errOut, out == want)
		}
	}
	_, errOut, code := kdissectStdin(t, data, "--format", "summary", "-", "-")
	if code != cli.ExitFailure || !strings.Contains(errOut, "stdin (-) given twice") {
		t.Errorf("- twice: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = kdissectStdin(t, []byte("not a capture"), "-")
	if code != cli.ExitFailure || !strings.Contains(errOut, "kdissect: stdin: not a pcap or pcapng file") {
		t.Errorf("text on stdin: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = kdissect(t, "--format", "summary")
	if code != cli.ExitUsage || !strings.Contains(errOut, "no capture file given") || !strings.Contains(errOut, "-r FILE") {
		t.Errorf("no file: exit %d, stderr %q", code, errOut)
	}
}

// countPackets reads a capture with the capture package: the packets and TCP packets a run
// that reads it must report.
func countPackets(t *testing.T, file string) capture.Stats {
	t.Helper()
	r, err := capture.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			return r.Stats()
		} else if err != nil {
			var pe *capture.PacketError
			if !errors.As(err, &pe) {
				t.Fatal(err)
			}
		}
	}
}

// TestSilentRuns: a run that shows no message says on stderr what it read and why nothing
// matched, and exits 0; TLS gets its one-line report without -p.
func TestSilentRuns(t *testing.T) {
	tlsFile, httpFile, kafka := pcap("other-tls.pcap"), pcap("other-http.pcap"), pcap("kgo-produce-fetch.pcap")
	all, _, _ := kdissect(t, "--format", "json", kafka)
	messages := strings.Count(all, `"kind":"request"`) + strings.Count(all, `"kind":"response"`)
	for _, tt := range []struct {
		name string
		args []string
		file string
		want []string
	}{
		{"TLS without -p", []string{"--format", "summary"}, tlsFile,
			[]string{"TCP connections to port 443", "no Kafka request seen on any port", "TLS seen on port 443 (2 connections): try -p 443 --tls-keylog FILE"}},
		{"TLS with a key log of other sessions", []string{"--format", "summary", "--tls-keylog", pcap("kgo-tls12.keylog")}, pcap("kgo-tls13.pcap"),
			[]string{"TLS seen on port 9093 (6 connections): the key log given has no keys for these sessions"}},
		{"no Kafka", []string{"--format", "summary", "--stats"}, httpFile,
			[]string{"4 TCP connections to port 80", "no Kafka request seen on any port"}},
		{"filters", []string{"--format", "json", "--topic", "no-such-topic"}, kafka,
			[]string{fmt.Sprintf("the filters excluded all %d Kafka messages", messages)}},
		{"other port", []string{"-p", "9999", "--format", "summary"}, kafka,
			[]string{"0 TCP connections", "no TCP connection to the ports -p names (9999)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := kdissect(t, append(tt.args, tt.file)...)
			st := countPackets(t, tt.file)
			want := append(tt.want, fmt.Sprintf("kdissect: no Kafka message shown: read %d packets (%d TCP) in 1 file", st.Packets, st.TCP))
			if code != cli.ExitOK {
				t.Errorf("exit %d", code)
			}
			for _, w := range want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if strings.Contains(out, "┌") {
				t.Errorf("empty statistics tables shown:\n%s", out)
			}
		})
	}
	// The TLS connections are reported on stdout, one line each, without -p as with it.
	without, _, _ := kdissect(t, "--format", "summary", tlsFile)
	with, _, _ := kdissect(t, "--format", "summary", "-p", "443", tlsFile)
	if strings.Count(without, "! TLS 1.") != 2 || without != with {
		t.Errorf("TLS lines without -p:\n%s\nwith -p 443:\n%s", without, with)
	}
	if strings.Contains(without, "taken as Kafka") {
		t.Errorf("a TLS port was taken as Kafka:\n%s", without)
	}
	// A run that shows messages says nothing more.
	if _, errOut, _ := kdissect(t, "--format", "summary", kafka); errOut != "" {
		t.Errorf("stderr %q on a run that shows messages", errOut)
	}
	// -o DIR/ reads the captures at once, their notes mixed: each note names its capture, and
	// one connection is one.
	pg := pcap("other-postgres.pcap")
	_, errOut, code := kdissect(t, "--format", "summary", "-o", t.TempDir()+"/", httpFile, pg)
	for _, w := range []string{"kdissect: " + httpFile + ": no Kafka message shown", "kdissect: " + pg + ": no Kafka message shown", " 1 TCP connection to port 5432;"} {
		if code != cli.ExitOK || !strings.Contains(errOut, w) {
			t.Errorf("exit %d, stderr %q lacks %q", code, errOut, w)
		}
	}
}

// TestSeveralFiles: with several files, text formats print a header before each file's output,
// and JSON lines carry a "file" key; with one file, neither.
func TestSeveralFiles(t *testing.T) {
	a, b := pcap("kgo-produce-fetch.pcap"), pcap("kgo-admin.pcapng")
	for _, format := range []string{"summary", "diagram"} {
		one, _, _ := kdissect(t, "--format", format, a)
		two, _, code := kdissect(t, "--format", format, a, b)
		if code != 0 || strings.Contains(one, "==>") {
			t.Fatalf("%s: exit %d, or a header with one file", format, code)
		}
		onlyB, _, _ := kdissect(t, "--format", format, b)
		if format == "summary" {
			// Relative times count from the earliest first packet of the files: compare the packet numbers.
			one, onlyB, two = firstColumn(one), firstColumn(onlyB), firstColumn(two)
		} else {
			// Stream numbers go on from one file to the next.
			streams := regexp.MustCompile(`  stream [0-9]+`)
			one, onlyB, two = streams.ReplaceAllString(one, ""), streams.ReplaceAllString(onlyB, ""), streams.ReplaceAllString(two, "")
		}
		want := "==> " + a + " <==\n" + one + "==> " + b + " <==\n" + onlyB
		if two != want {
			t.Errorf("%s: two files do not give a header and each file's output", format)
		}
	}
	out, _, _ := kdissect(t, "--format", "json", "-r", a, "-r", b)
	files := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var v struct{ File string }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		files[v.File]++
	}
	oneA, _, _ := kdissect(t, "--format", "json", a)
	if files[a] != strings.Count(oneA, "\n") || files[b] == 0 || len(files) != 2 {
		t.Errorf("lines per file: %v", files)
	}
	if strings.Contains(oneA, `"file"`) {
		t.Errorf("one file, and lines carry a file key")
	}
}

// firstColumn keeps the first word of each line (a summary's packet number), and the header
// lines whole.
func firstColumn(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "==>") {
			l = f[0] + "\n"
		}
		b.WriteString(l)
	}
	return b.String()
}

// TestDecodeHints: decode says when its input is neither hex text nor binary frames, and when a
// frame that is not a clean request may be a response given without --api, naming the APIs
// that decode it cleanly.
func TestDecodeHints(t *testing.T) {
	out, errOut, code := kdissectStdin(t, []byte("zzzz-not-hex\n"), "decode")
	if code != cli.ExitFailure || out != "" || !strings.Contains(errOut, "neither hex text (digits, 0x bytes, xxd or hexdump -C output) nor binary frames") || !strings.Contains(errOut, `line 1: "zzzz-not-hex" is not hex`) {
		t.Errorf("text: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = 1, "broker-1.example", 9092
	resp.Brokers = append(resp.Brokers, b)
	tp := kmsg.NewMetadataResponseTopic()
	name := "orders"
	tp.Topic = &name
	tp.Partitions = append(tp.Partitions, kmsg.NewMetadataResponseTopicPartition())
	resp.Topics = append(resp.Topics, tp)
	body := resp.AppendTo(nil)
	frame := binary.BigEndian.AppendUint32(nil, uint32(4+1+len(body)))
	frame = binary.BigEndian.AppendUint32(frame, 7) // correlation id
	frame = append(frame, 0)                        // header tags
	frame = append(frame, body...)

	_, errOut, code = kdissectStdin(t, frame, "decode", "--format", "summary")
	for _, w := range []string{"not a clean request", "--api and --api-version", "Metadata v"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("a response without --api: exit %d, stderr %q lacks %q", code, errOut, w)
		}
	}
	out, errOut, code = kdissectStdin(t, frame, "decode", "--format", "summary", "--api", "Metadata", "--api-version", "12")
	if code != 0 || errOut != "" || !strings.Contains(out, "Response Metadata v12") || strings.Contains(out, "warning") {
		t.Errorf("with --api: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	// A clean request gets no hint.
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kdissect-test", "1"
	full := binary.BigEndian.AppendUint32(nil, 0)  // size, set below
	full = binary.BigEndian.AppendUint16(full, 18) // ApiVersions
	full = binary.BigEndian.AppendUint16(full, 3)
	full = binary.BigEndian.AppendUint32(full, 1) // correlation id
	full = append(full, 0xff, 0xff, 0)            // client id null, header tags
	full = req.AppendTo(full)
	binary.BigEndian.PutUint32(full, uint32(len(full)-4))
	out, errOut, code = kdissectStdin(t, full, "decode", "--format", "summary")
	if code != 0 || errOut != "" || !strings.Contains(out, "ApiVersions v3") {
		t.Errorf("a clean request: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
}

// TestOverlongRecords: a capture whose pcap records claim 16 captured bytes more than the
// packet's original length (as a capture tool in the wild writes them; tshark reads them and
// warns "Frame length is less than captured length") dissects like the same capture without
// the extra bytes, with one notice naming the file and the first such packet.
func TestOverlongRecords(t *testing.T) {
	src := pcap("kgo-produce-fetch.pcap")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if le.Uint32(data) != 0xa1b2c3d4 {
		t.Fatalf("%s is not a little-endian microsecond pcap file", src)
	}
	quirk := bytes.Clone(data[:24])
	records := 0
	for off := 24; off < len(data); records++ {
		capLen := int(le.Uint32(data[off+8:]))
		h := bytes.Clone(data[off : off+16])
		le.PutUint32(h[8:], uint32(capLen+16))
		quirk = append(append(append(quirk, h...), data[off+16:off+16+capLen]...), make([]byte, 16)...)
		off += 16 + capLen
	}
	file := writeTemp(t, "overlong.pcap", quirk)
	want, _, _ := kdissect(t, "--format", "json", src)
	out, errOut, code := kdissect(t, "--format", "json", file)
	if code != 0 || out != want {
		t.Errorf("exit %d; the same messages as the file without the quirk: %v", code, out == want)
	}
	notice := fmt.Sprintf("kdissect: %s: %d packet records claim more captured bytes than the packet had (the first: packet 1, ", file, records)
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, notice) {
		t.Errorf("stderr %q, want one line starting %q", errOut, notice)
	}
}

// TestErrorsLookup: "kdissect errors 3" and "kdissect errors UNKNOWN_TOPIC_OR_PARTITION" show
// that one error, with what it means; the whole table gives every error a description.
func TestErrorsLookup(t *testing.T) {
	for _, arg := range []string{"3", "UNKNOWN_TOPIC_OR_PARTITION", "unknown_topic_or_partition"} {
		out, errOut, code := kdissect(t, "errors", arg)
		if code != 0 || errOut != "" {
			t.Fatalf("errors %s: exit %d, stderr %q", arg, code, errOut)
		}
		e, _ := codec.LookupError("3")
		rows := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "│") && !strings.Contains(l, "code") {
				rows++
				if !strings.Contains(l, " 3 │ UNKNOWN_TOPIC_OR_PARTITION ") || !strings.Contains(l, e.About) || e.About == "" {
					t.Errorf("errors %s: row %q", arg, l)
				}
			}
		}
		if rows != 1 {
			t.Errorf("errors %s: %d rows:\n%s", arg, rows, out)
		}
	}
	out, _, _ := kdissect(t, "errors")
	for _, e := range codec.ErrorCodes() {
		if !strings.Contains(out, e.About) {
			t.Errorf("the table lacks the description of %s", e.Name)
		}
	}
}

// writeTemp writes content to a file of the test's own and returns its path.
func writeTemp(t testing.TB, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
