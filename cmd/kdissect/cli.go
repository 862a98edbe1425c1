package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"
)

// Exit statuses, the same for every subcommand. Whatever is not exitOK was said on stderr.
const (
	exitOK      = 0 // done
	exitFailure = 1 // damaged input, or an I/O error
	exitUsage   = 2 // the command line is wrong
)

// subcommand is one of kdissect's commands: the capture command (name "") or a named one.
type subcommand struct {
	name  string
	usage string // the synopsis, after "Usage:"
	short string // what it does, in the list of subcommands
	about string // what it does, for --help
	run   func(cmd *subcommand, args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// flags makes the subcommand's flag set; findSubcommand uses it to know which flags take a
	// value.
	flags func() *flag.FlagSet
}

// subcommands lists the named commands; the capture command is captureCommand.
func subcommands() []*subcommand {
	return []*subcommand{
		{name: "decode", short: "decode raw frames (binary or hex text) from FILE or stdin", usage: "kdissect decode [flags] [FILE]", run: runDecode, flags: func() *flag.FlagSet { fs, _ := decodeFlags(); return fs },
			about: "Decodes raw Kafka frames (a 4-byte size, a header, a body), one after another, from FILE or\n" +
				"stdin, binary or hex text. Frames are read as requests; responses need --api and\n" +
				"--api-version, since a response does not say which API it answers."},
		{name: "schema", short: "the APIs, or one message's layout at a version", usage: "kdissect schema [API] [flags]", run: runSchema, flags: func() *flag.FlagSet { fs, _ := schemaFlags(); return fs },
			about: "Without an API, the table of every API. With an API (name or key), the layout of its\n" +
				"request or response at one version, header first; with --diff, what changed between two\n" +
				"versions."},
		{name: "errors", short: "Kafka's error codes and what they mean", usage: "kdissect errors [CODE|NAME]", run: runErrors, flags: errorsFlags,
			about: "Kafka's error codes: the whole table, or one error looked up by code (3) or name\n" +
				"(UNKNOWN_TOPIC_OR_PARTITION, case ignored), each with what it means."},
		{name: "live", short: "capture on a network interface (Linux; root or CAP_NET_RAW)", usage: "kdissect live -i INTERFACE [flags]", run: runLive, flags: func() *flag.FlagSet { fs, _ := liveFlags(); return fs },
			about: "Captures Kafka traffic on a network interface (Linux, AF_PACKET; needs root or\n" +
				"CAP_NET_RAW) and prints each message as it completes. Ctrl-C stops."},
		{name: "demo", short: "dissect a capture built into kdissect", usage: "kdissect demo [flags]", run: runDemo, flags: func() *flag.FlagSet { fs, _ := captureFlags(); return fs },
			about: "Dissects a capture built into kdissect (a franz-go client and a broker), with the capture\n" +
				"command's flags: what kdissect does, before you have a capture of your own."},
		{name: "version", short: "version, revision, and the Kafka versions known", usage: "kdissect version", run: runVersion, flags: noFlags("version"),
			about: "Prints kdissect's version and VCS revision, and the newest Kafka versions its built-in\n" +
				"definitions know. Also: kdissect --version."},
		{name: "help", short: "this text, or a subcommand's", usage: "kdissect help [SUBCOMMAND]", run: runHelp, flags: noFlags("help"),
			about: "Prints the usage of kdissect, or of one subcommand."},
	}
}

// captureCommand is kdissect without a subcommand: dissect capture files.
func captureCommand() *subcommand {
	return &subcommand{usage: "kdissect [flags] CAPTURE...\n  kdissect [flags] -r CAPTURE [-r CAPTURE]...\n  tcpdump -w - ... | kdissect [flags] -",
		about: "Dissects pcap and pcapng captures (gzipped too; - is stdin): reassembles TCP, cuts the\n" +
			"streams into Kafka frames, pairs responses with requests, and prints each message.",
		run: runCapture}
}

func noFlags(name string) func() *flag.FlagSet {
	return func() *flag.FlagSet { return flag.NewFlagSet("kdissect "+name, flag.ContinueOnError) }
}

// run is main without the process: arguments, streams, exit status. It is the one way out of
// every subcommand.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd, rest := findSubcommand(args)
	return cmd.run(cmd, rest, stdin, stdout, stderr)
}

// findSubcommand picks the subcommand: the first argument that is not a flag or a flag's value,
// if it names one, so that flags may come before the subcommand's name as well as after it
// ("kdissect --schema-dir D schema Fetch"). A file named like a subcommand is read as ./NAME.
// The subcommand's arguments are the others, in their order.
func findSubcommand(args []string) (*subcommand, []string) {
	cmds := subcommands()
	// Which flags take a value: those of any subcommand (a flag unknown to the one chosen is
	// refused when its flags are parsed).
	sets := []*flag.FlagSet{func() *flag.FlagSet { fs, _ := captureFlags(); return fs }()}
	for _, c := range cmds {
		sets = append(sets, c.flags())
	}
	takesValue := func(long string, short byte) bool {
		for _, fs := range sets {
			var f *flag.Flag
			if long != "" {
				f = fs.Lookup(long)
			} else {
				f = fs.ShorthandLookup(string(short))
			}
			if f != nil {
				return f.NoOptDefVal == ""
			}
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return captureCommand(), args
		case strings.HasPrefix(a, "--"):
			if !strings.Contains(a, "=") && takesValue(a[2:], 0) {
				i++
			}
			continue
		case len(a) > 1 && a[0] == '-':
			// -x, -xp 9092, -p9092: the last letter of a group may take the next argument.
			for j := 1; j < len(a); j++ {
				if takesValue("", a[j]) {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
			continue
		}
		for _, c := range cmds {
			if c.name == a {
				return c, append(args[:i:i], args[i+1:]...)
			}
		}
		return captureCommand(), args
	}
	return captureCommand(), args
}

// parse reads the subcommand's flags. When the run ends there, it returns false and the exit
// status: 0 after --help or -h (the subcommand's usage on stdout), 2 after a flag error (said on
// stderr, with where to find the usage).
func (cmd *subcommand) parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		cmd.help(stdout, fs)
		return exitOK, false
	}
	if err == nil {
		err = checkFlags(fs)
	}
	if err != nil {
		return cmd.usageError(stderr, "%v", err), false
	}
	return exitOK, true
}

// path is the command as typed: "kdissect" or "kdissect schema".
func (cmd *subcommand) path() string {
	if cmd.name == "" {
		return "kdissect"
	}
	return "kdissect " + cmd.name
}

// help writes the subcommand's usage, what it does, and its flags.
func (cmd *subcommand) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n  %s\n\n%s\n", cmd.usage, cmd.about)
	if cmd.name == "" {
		fmt.Fprintf(w, "\nSubcommands (kdissect SUBCOMMAND --help for each):\n")
		for _, c := range subcommands() {
			fmt.Fprintf(w, "  %-36s %s\n", c.usage, c.short)
		}
	}
	if flags := fs.FlagUsages(); flags != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", flags)
	}
}

// usageError says what is wrong with the command line, and where to find the usage; its result
// is the exit status.
func (cmd *subcommand) usageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "kdissect: "+format+"\n", a...)
	fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.path())
	return exitUsage
}

// failed says why a run failed (damaged input, an I/O error); its result is the exit status.
func failed(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "kdissect: "+format+"\n", a...)
	return exitFailure
}

// runHelp is "kdissect help [SUBCOMMAND]".
func runHelp(cmd *subcommand, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cmd.flags()
	if status, ok := cmd.parse(fs, args, stdout, stderr); !ok {
		return status
	}
	switch fs.NArg() {
	case 0:
		fs, _ := captureFlags()
		captureCommand().help(stdout, fs)
		return exitOK
	case 1:
		for _, c := range subcommands() {
			if c.name == fs.Arg(0) {
				c.help(stdout, c.flags())
				return exitOK
			}
		}
		return cmd.usageError(stderr, "no subcommand %q", fs.Arg(0))
	}
	return cmd.usageError(stderr, "one subcommand at most, got %q", fs.Args())
}

// hideDefault keeps --help from showing a flag's internal default (-1 for "not given"): the
// flag's usage text says what not giving it means.
func hideDefault(fs *flag.FlagSet, names ...string) {
	for _, n := range names {
		fs.Lookup(n).DefValue = "0"
	}
}

// flagError is a flag value found wrong after parsing (an --api-key without --schema-dir, an
// unknown --records mode): a usage error.
type flagError string

func (e flagError) Error() string { return string(e) }

// report says why a run cannot go on: a usage error for a flagError, a failure otherwise.
func (cmd *subcommand) report(stderr io.Writer, err error) int {
	var fe flagError
	if errors.As(err, &fe) {
		return cmd.usageError(stderr, "%v", err)
	}
	return failed(stderr, "%v", err)
}

// flagMinimum holds the flags whose smallest value is not 0.
var flagMinimum = map[string]int64{"workers": 1}

// checkFlags refuses values no flag of kdissect takes, in every subcommand: negative numbers and
// durations (a count, a size, a version, a stream number, a latency), and empty strings or lists
// given explicitly (-p ”), which would otherwise quietly mean "not given".
func checkFlags(fs *flag.FlagSet) error {
	var err error
	check := func(f *flag.Flag) error {
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64", "duration":
			s := f.Value.String()
			if f.Value.Type() == "duration" {
				if d, _ := time.ParseDuration(s); d < 0 {
					return fmt.Errorf("--%s %s: cannot be negative", f.Name, s)
				}
				return nil
			}
			n, _ := strconv.ParseInt(s, 10, 64)
			if n < flagMinimum[f.Name] {
				if n < 0 {
					return fmt.Errorf("--%s %d: cannot be negative", f.Name, n)
				}
				return fmt.Errorf("--%s %d: at least %d", f.Name, n, flagMinimum[f.Name])
			}
		case "string":
			if f.Value.String() == "" {
				return fmt.Errorf("--%s: empty value", f.Name)
			}
		default:
			if sv, ok := f.Value.(flag.SliceValue); ok {
				vs := sv.GetSlice()
				if strings.Trim(strings.Join(vs, ","), ", ") == "" {
					return fmt.Errorf("--%s: empty value", f.Name)
				}
			}
		}
		return nil
	}
	fs.VisitAll(func(f *flag.Flag) {
		if err == nil && (f.Changed || flagMinimum[f.Name] != 0) {
			err = check(f)
		}
	})
	return err
}
