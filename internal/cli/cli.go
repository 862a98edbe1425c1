// Package cli is kdissect's command-line plumbing: subcommands found among the arguments,
// their usage and --help, the checks every flag gets, and the one way out (the exit statuses);
// and the runs behind the flags: the codec and renderer the shared flags ask for (Common), a
// capture's run with -o, -w and pipes (Capture), a live capture's (Live), the workshop page's
// (Serve); and the wording, for the command line, of the library packages' typed errors. The
// subcommands' flags, and which run each one wires up, stay in cmd/kdissect.
package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/internal/inert"
	"github.com/kdissect/kdissect/internal/suggest"
)

// Exit statuses, the same for every subcommand. Whatever is not ExitOK was said on stderr.
const (
	ExitOK      = 0 // done
	ExitFailure = 1 // damaged input, or an I/O error
	ExitUsage   = 2 // the command line is wrong
)

// Command is one of a program's commands: its main command (Name "") or a named subcommand.
type Command struct {
	Name  string
	Usage string // the synopsis, after "Usage:"
	Short string // what it does, in the list of subcommands
	About string // what it does, for --help
	Run   func(cmd *Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// Flags makes the command's flag set; the program uses it to know which flags take a value.
	Flags func() *flag.FlagSet

	prog *Program
}

// Program is a command line with a main command and named subcommands, and "help".
type Program struct {
	Name        string // as typed: "kdissect"
	Main        *Command
	Subcommands []*Command
}

// NoFlags makes an empty flag set for a subcommand that has none.
func NoFlags(prog, name string) func() *flag.FlagSet {
	return func() *flag.FlagSet { return flag.NewFlagSet(prog+" "+name, flag.ContinueOnError) }
}

// HelpCommand is "PROGRAM help [SUBCOMMAND]".
func HelpCommand(prog string) *Command {
	return &Command{Name: "help", Short: "this text, or a subcommand's", Usage: prog + " help [SUBCOMMAND]", Run: runHelp, Flags: NoFlags(prog, "help"),
		About: "Prints the usage of " + prog + ", or of one subcommand."}
}

// Run is main without the process: arguments, streams, exit status. It is the one way out of
// every subcommand. Whatever a subcommand says on stderr (errors, warnings, notices, which
// quote file names, definitions and strings from captures) is shown under package inert's
// rule: nothing said there drives the terminal.
func (p *Program) Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stderr = inert.NewWriter(stderr)
	cmd, rest := p.Find(args)
	if word := p.mistyped(args); cmd == p.Main && word != "" {
		return cmd.UsageError(stderr, "no subcommand %q, and no file of that name%s", word, p.nearest(word))
	}
	return cmd.Run(cmd, rest, stdin, stdout, stderr)
}

// mistyped is the first argument, when it is a word (no dot, no slash) that neither names a
// subcommand nor exists as a file: a mistyped subcommand ("kdissect shema Fetch", "kdissect lve
// -i lo"), which is said before the main command's flags are parsed. A word that exists as a
// file is a file.
func (p *Program) mistyped(args []string) string {
	i := p.first(args)
	if i < 0 {
		return ""
	}
	a := args[i]
	if a == "-" || strings.ContainsAny(a, "./\\") || p.Command(a) != nil {
		return ""
	}
	if _, err := os.Stat(a); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return a
}

// nearest is ": did you mean NAME?" for the subcommand nearest to word (suggest.Nearest), or ""
// when none is near (the usage error points to --help).
func (p *Program) nearest(word string) string {
	names := make([]string, len(p.Subcommands))
	for i, c := range p.Subcommands {
		names[i] = c.Name
	}
	if best := suggest.Nearest(word, names); best != "" {
		return ": did you mean " + best + "?"
	}
	return ""
}

// Find picks the subcommand: the first argument that is not a flag or a flag's value, if it
// names one, so that flags may come before the subcommand's name as well as after it
// ("kdissect --schema-dir D schema Fetch"). A file named like a subcommand is read as ./NAME.
// The subcommand's arguments are the others, in their order.
func (p *Program) Find(args []string) (*Command, []string) {
	p.Main.prog = p
	i := p.first(args)
	if i < 0 {
		return p.Main, args
	}
	if c := p.Command(args[i]); c != nil {
		return c, append(args[:i:i], args[i+1:]...)
	}
	return p.Main, args
}

// first is the index of the first argument that is not a flag or a flag's value, where a
// subcommand's name may be; -1 when there is none, or "--" comes first.
func (p *Program) first(args []string) int {
	// Which flags take a value: those of any command (a flag unknown to the one chosen is
	// refused when its flags are parsed).
	var sets []*flag.FlagSet
	for _, c := range append([]*Command{p.Main}, p.Subcommands...) {
		sets = append(sets, c.Flags())
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return -1
		case len(a) > 1 && a[0] == '-':
			if valueNext(a, sets...) {
				i++
			}
			continue
		}
		return i
	}
	return -1
}

// Parse reads the command's flags. When the run ends there, it returns false and the exit
// status: 0 after --help or -h (the command's usage on stdout), 2 after a flag error (said on
// stderr, with where to find the usage).
func (cmd *Command) Parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(negativeArgs(fs, args))
	if errors.Is(err, flag.ErrHelp) {
		cmd.Help(stdout, fs)
		return ExitOK, false
	}
	if err == nil {
		err = CheckFlags(fs)
	}
	if err != nil {
		return cmd.UsageError(stderr, "%v", err), false
	}
	return ExitOK, true
}

// negativeArgs makes the negative numbers among args arguments rather than flags ("kdissect
// errors -1"), when no flag of fs is a digit: they go after a "--", behind the other arguments
// and in their order. A negative number that is a flag's value (--api-key -1) stays its value.
func negativeArgs(fs *flag.FlagSet, args []string) []string {
	digit := false
	fs.VisitAll(func(f *flag.Flag) { digit = digit || f.Shorthand >= "0" && f.Shorthand <= "9" })
	if digit || !slices.ContainsFunc(args, negativeNumber) {
		return args
	}
	var flags, plain []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			plain = append(plain, args[i+1:]...)
			i = len(args)
		case negativeNumber(a) || a == "-" || !strings.HasPrefix(a, "-"):
			plain = append(plain, a)
		default:
			flags = append(flags, a)
			if i+1 < len(args) && valueNext(a, fs) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return append(append(flags, "--"), plain...)
}

// negativeNumber reports whether a is a negative integer: -1, -42.
func negativeNumber(a string) bool {
	n, err := strconv.ParseInt(a, 10, 64)
	return err == nil && n < 0
}

// valueNext reports whether the flag argument a is followed by its value: a --name without
// "=" whose flag takes a value, or a group -xyp whose first letter that takes a value is its
// last (-p9092 has its value). The flags are the first of sets to know the name.
func valueNext(a string, sets ...*flag.FlagSet) bool {
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
	if long, ok := strings.CutPrefix(a, "--"); ok {
		return !strings.Contains(a, "=") && takesValue(long, 0)
	}
	for j := 1; j < len(a); j++ {
		if takesValue("", a[j]) {
			return j == len(a)-1
		}
	}
	return false
}

// Program is the program the command belongs to (known once Find has chosen a command).
func (cmd *Command) Program() *Program { return cmd.prog }

// Command is the subcommand of that name, or nil.
func (p *Program) Command(name string) *Command {
	for _, c := range p.Subcommands {
		if c.Name == name {
			c.prog = p
			return c
		}
	}
	return nil
}

// Path is the command as typed: "kdissect" or "kdissect schema".
func (cmd *Command) Path() string {
	if cmd.Name == "" {
		return cmd.prog.Name
	}
	return cmd.prog.Name + " " + cmd.Name
}

// Help writes the command's usage, what it does, and its flags.
func (cmd *Command) Help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n  %s\n\n%s\n", cmd.Usage, cmd.About)
	if cmd.Name == "" {
		fmt.Fprintf(w, "\nSubcommands (%s SUBCOMMAND --help for each):\n", cmd.prog.Name)
		for _, c := range cmd.prog.Subcommands {
			// A synopsis of several lines (serve's) is listed by its first; --help shows all.
			synopsis, _, _ := strings.Cut(c.Usage, "\n")
			fmt.Fprintf(w, "  %-36s %s\n", synopsis, c.Short)
		}
	}
	if flags := fs.FlagUsages(); flags != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", flags)
	}
}

// UsageError says what is wrong with the command line, and where to find the usage; its result
// is the exit status.
func (cmd *Command) UsageError(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{cmd.prog.Name}, a...)...)
	fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.Path())
	return ExitUsage
}

// Failed says why a run failed (damaged input, an I/O error); its result is the exit status.
func (cmd *Command) Failed(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{cmd.prog.Name}, a...)...)
	return ExitFailure
}

// Wrote is the exit status after writing the output: 1, said on stderr, when writing failed.
func (cmd *Command) Wrote(stderr io.Writer, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "%s: writing output: %v\n", cmd.Path(), err)
		return ExitFailure
	}
	return ExitOK
}

// Report says why a run cannot go on: a usage error for a FlagError, a failure otherwise.
func (cmd *Command) Report(stderr io.Writer, err error) int {
	var fe FlagError
	if errors.As(err, &fe) {
		return cmd.UsageError(stderr, "%v", err)
	}
	return cmd.Failed(stderr, "%v", err)
}

// FlagError is a flag value found wrong after parsing (an --api-key without --schema-dir, an
// unknown --records mode): a usage error.
type FlagError string

func (e FlagError) Error() string { return string(e) }

// runHelp is "PROGRAM help [SUBCOMMAND]".
func runHelp(cmd *Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cmd.Flags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	p := cmd.prog
	switch fs.NArg() {
	case 0:
		p.Main.Help(stdout, p.Main.Flags())
		return ExitOK
	case 1:
		if c := p.Command(fs.Arg(0)); c != nil {
			c.Help(stdout, c.Flags())
			return ExitOK
		}
		names := make([]string, len(p.Subcommands))
		for i, c := range p.Subcommands {
			names[i] = c.Name
		}
		// The program's usage lists them, not help's.
		return p.Main.UsageError(stderr, "no subcommand %q; there are %s", fs.Arg(0), strings.Join(names, ", "))
	}
	return cmd.UsageError(stderr, "one subcommand at most, got %q", fs.Args())
}

// HideDefault keeps --help from showing a flag's internal default (-1 for "not given"): the
// flag's usage text says what not giving it means.
func HideDefault(fs *flag.FlagSet, names ...string) {
	for _, n := range names {
		fs.Lookup(n).DefValue = "0"
	}
}

// minimumKey is the flag annotation that holds a flag's smallest value, when it is not 0.
const minimumKey = "cli-minimum"

// SetMinimum makes n the smallest value CheckFlags lets the named flag take (--workers 1).
func SetMinimum(fs *flag.FlagSet, name string, n int64) {
	fs.SetAnnotation(name, minimumKey, []string{strconv.FormatInt(n, 10)})
}

// minimum is the flag's smallest value: 0 unless SetMinimum says otherwise.
func minimum(f *flag.Flag) int64 {
	if v := f.Annotations[minimumKey]; len(v) == 1 {
		n, _ := strconv.ParseInt(v[0], 10, 64)
		return n
	}
	return 0
}

// CheckFlags refuses values no flag takes, in every subcommand: negative numbers and durations
// (a count, a size, a version, a stream number, a latency), and empty strings or lists given
// explicitly (-p ”), which would otherwise quietly mean "not given".
func CheckFlags(fs *flag.FlagSet) error {
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
			if low := minimum(f); n < low {
				if n < 0 {
					return fmt.Errorf("--%s %d: cannot be negative", f.Name, n)
				}
				return fmt.Errorf("--%s %d: at least %d", f.Name, n, low)
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
		if err == nil && (f.Changed || minimum(f) != 0) {
			err = check(f)
		}
	})
	return err
}
