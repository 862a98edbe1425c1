package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/capture"
	"github.com/kdissect/kdissect/codec/schema"
)

// TestVersion: the text says the module version, the VCS revision and its time, uncommitted
// changes, and the Go version, from the build info.
func TestVersion(t *testing.T) {
	set, err := schema.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "github.com/kdissect/kdissect", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-12-01T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	out := Version(info, set)
	for _, w := range []string{"kdissect v1.2.3\n", "revision 0123abcd (2026-12-01T08:00:00Z), with uncommitted changes\n", "go1.99"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in:\n%s", w, out)
		}
	}
	out = Version(nil, set)
	for _, w := range []string{"kdissect (unknown)\n", "revision unknown", "built with (unknown)\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in:\n%s", w, out)
		}
	}
}

// TestProgressNotWanted: no progress line when stderr is not a terminal (tests, pipes, files).
func TestProgressNotWanted(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for _, stderr := range []any{&buf, f} {
		for _, silent := range []bool{true, false} {
			if ProgressWanted(&buf, stderr.(interface{ Write([]byte) (int, error) }), silent) {
				t.Errorf("progress wanted on %T with a format silent %v", stderr, silent)
			}
		}
	}
	if Colorful(&buf) || Colorful(f) {
		t.Error("colours for output that is not a terminal")
	}
}

// TestCheckFlags: negative numbers and durations, values under a flag's minimum, and empty
// values given explicitly are refused, naming the flag; what is not given is not checked.
func TestCheckFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{nil, ""},
		{[]string{"--n", "3", "--d", "1s", "--s", "x", "--l", "a,b", "--w", "2"}, ""},
		{[]string{"--n", "-1"}, "--n -1: cannot be negative"},
		{[]string{"--d", "-1s"}, "--d -1s: cannot be negative"},
		{[]string{"--w", "0"}, "--w 0: at least 1"},
		{[]string{"--w", "-2"}, "--w -2: cannot be negative"},
		{[]string{"--s", ""}, "--s: empty value"},
		{[]string{"--l", ","}, "--l: empty value"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.Int("n", -1, "")
		fs.Duration("d", 0, "")
		fs.String("s", "", "")
		fs.StringSlice("l", nil, "")
		fs.Int("w", 1, "")
		SetMinimum(fs, "w", 1)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		err := CheckFlags(fs)
		if got := fmtErr(err); got != tt.err {
			t.Errorf("%q: error %q, want %q", tt.args, got, tt.err)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestProgram: the subcommand is found after flags that take values, a mistyped one is said
// (what follows -- is no subcommand), help lists the subcommands, and errors name the command
// as typed.
func TestProgram(t *testing.T) {
	var ran string
	cmd := func(name string) *Command {
		return &Command{Name: name, Usage: "p " + name, Short: name + " things", About: "Does " + name + ".",
			Flags: func() *flag.FlagSet {
				fs := flag.NewFlagSet(name, flag.ContinueOnError)
				fs.StringP("dir", "d", "", "a directory")
				return fs
			},
			Run: func(cmd *Command, args []string, _ io.Reader, stdout, stderr io.Writer) int {
				fs := cmd.Flags()
				if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
					return status
				}
				ran = cmd.Name + " " + strings.Join(fs.Args(), " ")
				if fs.NArg() > 1 {
					return cmd.UsageError(stderr, "too many")
				}
				return ExitOK
			}}
	}
	sub := cmd("sub")
	sub.Usage += "\n  p sub --all" // a synopsis of two lines: the list shows the first
	p := &Program{Name: "p", Main: cmd(""), Subcommands: []*Command{sub, HelpCommand("p")}}
	for _, tt := range []struct {
		args           []string
		code           int
		ran, out, errs string
	}{
		{[]string{"-d", "sub", "x.txt"}, ExitOK, " x.txt", "", ""},
		{[]string{"-d", "sub", "sbu"}, ExitUsage, "", "", "p: no subcommand \"sbu\", and no file of that name: did you mean sub?\nRun 'p --help' for usage.\n"},
		{[]string{"--", "sbu"}, ExitOK, " sbu", "", ""},
		{[]string{"-d", "x", "sub", "y"}, ExitOK, "sub y", "", ""},
		{[]string{"sub", "a", "b"}, ExitUsage, "sub a b", "", "p: too many\nRun 'p sub --help' for usage.\n"},
		{[]string{"--nope"}, ExitUsage, "", "", "p: unknown flag: --nope\nRun 'p --help' for usage.\n"},
		{[]string{"help", "sub"}, ExitOK, "", "Usage:\n  p sub\n  p sub --all\n\nDoes sub.\n\nFlags:\n  -d, --dir string   a directory\n", ""},
		{[]string{"--help"}, ExitOK, "", "Usage:\n  p \n\nDoes .\n\nSubcommands (p SUBCOMMAND --help for each):\n  p sub                                sub things\n  p help [SUBCOMMAND]                  this text, or a subcommand's\n\nFlags:\n  -d, --dir string   a directory\n", ""},
		{[]string{"help", "x"}, ExitUsage, "", "", "p: no subcommand \"x\"; there are sub, help\nRun 'p --help' for usage.\n"},
	} {
		ran = ""
		var out, errs bytes.Buffer
		code := p.Run(tt.args, nil, &out, &errs)
		if code != tt.code || ran != tt.ran || out.String() != tt.out || errs.String() != tt.errs {
			t.Errorf("%q: exit %d, ran %q, stdout %q, stderr %q; want %d, %q, %q, %q", tt.args, code, ran, out.String(), errs.String(), tt.code, tt.ran, tt.out, tt.errs)
		}
	}
}

// TestStopsAfter: the stops are named in the order count, duration, end.
func TestStopsAfter(t *testing.T) {
	for _, tt := range []struct {
		count    int
		duration time.Duration
		want     string
	}{
		{0, 0, "Ctrl-C"},
		{100, 0, "100 messages or Ctrl-C"},
		{0, 30 * time.Second, "30s or Ctrl-C"},
		{5, time.Minute, "5 messages or 1m0s or Ctrl-C"},
	} {
		if got := StopsAfter(tt.count, tt.duration, "Ctrl-C"); got != tt.want {
			t.Errorf("StopsAfter(%d, %v) = %q, want %q", tt.count, tt.duration, got, tt.want)
		}
	}
}

// TestWrote: an error writing the output is said on stderr, naming the command, with status 1.
func TestWrote(t *testing.T) {
	p := &Program{Name: "p", Main: &Command{Flags: NoFlags("p", "")}, Subcommands: []*Command{{Name: "sub", Flags: NoFlags("p", "sub")}}}
	sub, _ := p.Find([]string{"sub"})
	var errs bytes.Buffer
	if code := sub.Wrote(&errs, nil); code != ExitOK || errs.Len() != 0 {
		t.Errorf("no error: exit %d, stderr %q", code, errs.String())
	}
	if code := sub.Wrote(&errs, io.ErrShortWrite); code != ExitFailure || errs.String() != "p sub: writing output: short write\n" {
		t.Errorf("short write: exit %d, stderr %q", code, errs.String())
	}
}

// TestNearest: a mistyped subcommand is matched to the nearest, by edits (a swap of neighbours
// is one) or as a prefix; a word far from all is matched to none.
func TestNearest(t *testing.T) {
	p := &Program{Name: "kdissect", Main: &Command{}}
	for _, n := range []string{"decode", "schema", "errors", "live", "serve", "version", "help"} {
		p.Subcommands = append(p.Subcommands, &Command{Name: n})
	}
	for _, tt := range []struct{ word, want string }{
		{"shema", "schema"}, {"scheam", "schema"}, {"lve", "live"}, {"Live", "live"}, {"verison", "version"},
		{"sch", "schema"}, {"err", "errors"}, {"decdoe", "decode"}, {"srv", "serve"},
		{"xyzzy", ""}, {"capture", ""}, {"s", ""},
	} {
		want := ""
		if tt.want != "" {
			want = ": did you mean " + tt.want + "?"
		}
		if got := p.nearest(tt.word); got != want {
			t.Errorf("%s: %q, want %q", tt.word, got, want)
		}
	}
}

// TestNegativeArgs: negative numbers are arguments, in their order, unless they are a flag's
// value or a flag is a digit.
func TestNegativeArgs(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		digit bool
		want  []string
		n     int
	}{
		{[]string{"-1"}, false, []string{"-1"}, -1},
		{[]string{"a", "-1", "-x", "b"}, false, []string{"a", "-1", "b"}, -1},
		{[]string{"--n", "-5", "-2"}, false, []string{"-2"}, -5},
		{[]string{"--n=-5", "-2"}, false, []string{"-2"}, -5},
		{[]string{"-xn", "-5", "-2", "--", "-x"}, false, []string{"-2", "-x"}, -5},
		{[]string{"a", "b"}, false, []string{"a", "b"}, -1},
		{[]string{"-1"}, true, nil, -1},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		n := fs.IntP("n", "n", -1, "")
		fs.BoolP("x", "x", false, "")
		if tt.digit {
			fs.BoolP("one", "1", false, "")
		}
		if err := fs.Parse(negativeArgs(fs, tt.args)); err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !slices.Equal(fs.Args(), tt.want) || *n != tt.n {
			t.Errorf("%q: arguments %q, --n %d; want %q, %d", tt.args, fs.Args(), *n, tt.want, tt.n)
		}
	}
}

// TestPipeInstead: on a system without live capture, the error says which pipeline does it
// (the text the capture package said before the command line took it over); other errors
// stay as they are.
func TestPipeInstead(t *testing.T) {
	unsupported := fmt.Errorf("capturing on en0: %w (AF_PACKET)", capture.ErrLiveUnsupported)
	got := pipeInstead(unsupported, "en0").Error()
	want := "capturing on en0: live capture needs Linux (AF_PACKET); here, pipe a capture tool into kdissect, which dissects it as it arrives: tcpdump -i en0 -U -w - 'tcp port 9092' | kdissect -p 9092 - (on Windows: dumpcap -i en0 -w - -f 'tcp port 9092' | kdissect -p 9092 -)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !errors.Is(pipeInstead(unsupported, "en0"), capture.ErrLiveUnsupported) {
		t.Error("the error no longer wraps ErrLiveUnsupported")
	}
	other := fmt.Errorf("capturing on lo: %w", capture.ErrPermission)
	if got := pipeInstead(other, "lo"); got != other {
		t.Errorf("another error became %v", got)
	}
}
