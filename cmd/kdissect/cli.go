package main

import (
	"io"
	"runtime/debug"

	flag "github.com/spf13/pflag"

	"github.com/kdissect/kdissect/codec/schema"
	"github.com/kdissect/kdissect/internal/cli"
)

// program is kdissect's command line: the capture command and the named subcommands.
func program() *cli.Program {
	return &cli.Program{Name: "kdissect", Main: captureCommand(), Subcommands: subcommands()}
}

// run is main without the process: arguments, streams, exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return program().Run(args, stdin, stdout, stderr)
}

// subcommands lists the named commands; the capture command is captureCommand.
func subcommands() []*cli.Command {
	return []*cli.Command{
		{Name: "decode", Short: "decode raw frames (binary or hex text) from FILE or stdin", Usage: "kdissect decode [flags] [FILE]", Run: runDecode, Flags: func() *flag.FlagSet { fs, _ := decodeFlags(); return fs },
			About: "Decodes raw Kafka frames (a 4-byte size, a header, a body), one after another, from FILE or\n" +
				"stdin, binary or hex text: hex digits spaced anyhow (xxd -p), 0x bytes (0x1f 0x00, a C\n" +
				"array, xxd -i) or one 0x run, or a dump of xxd or hexdump -C. Frames are read as requests;\n" +
				"responses need --api and --api-version, since a response does not say which API it answers."},
		{Name: "schema", Short: "the APIs, or one message's layout at a version", Usage: "kdissect schema [API] [flags]", Run: runSchema, Flags: func() *flag.FlagSet { fs, _ := schemaFlags(); return fs },
			About: "Without an API, the table of every API. With an API (name or key), the layout of its\n" +
				"request or response at one version, header first, and where its definition comes from;\n" +
				"with --diff, what changed between two versions; with --compare DIR, what a directory of\n" +
				"definitions (a Kafka release's common/message folder) changes, API by API."},
		{Name: "errors", Short: "Kafka's error codes and what they mean", Usage: "kdissect errors [CODE|NAME]", Run: runErrors, Flags: cli.NoFlags("kdissect", "errors"),
			About: "Kafka's error codes: the whole table, or one error looked up by code (3) or name\n" +
				"(UNKNOWN_TOPIC_OR_PARTITION, case ignored), each with what it means."},
		{Name: "doctor", Short: "what is wrong in captures: findings, worst first", Usage: "kdissect doctor [flags] CAPTURE...", Run: runDoctor, Flags: func() *flag.FlagSet { fs, _ := doctorFlags(); return fs },
			About: "Reads captures as the capture command does, with its flags that choose and read the\n" +
				"messages, and instead of the messages prints findings, worst first: errors, retries,\n" +
				"throttling, lost packets, undecrypted TLS... each with its severity, the frames that show\n" +
				"it (for -Y 'frame in [...]'), what it means and what to check. --format json writes them\n" +
				"as JSON lines (\"kind\": \"finding\"); --format html a self-contained report (-o\n" +
				"report.html): the findings, and pictures of the latency per broker, the lag per\n" +
				"partition, the consumer groups' timeline and the throughput per topic."},
		{Name: "live", Short: "capture on a network interface (Linux; root or CAP_NET_RAW)", Usage: "kdissect live -i INTERFACE [flags]", Run: runLive, Flags: func() *flag.FlagSet { fs, _ := liveFlags(); return fs },
			About: "Captures Kafka traffic on a network interface (Linux, AF_PACKET; needs root or\n" +
				"CAP_NET_RAW) and prints each message as it completes. Ctrl-C stops."},
		{Name: "serve", Short: "the workshop page over HTTP: captures, uploads, or a live capture", Usage: "kdissect serve [flags] CAPTURE...\n  kdissect serve --live -i INTERFACE [-p PORTS] [flags]", Run: runServe, Flags: func() *flag.FlagSet { fs, _ := serveFlags(); return fs },
			About: "Serves the workshop page (the page of --format html) on --listen, 127.0.0.1:8080 by default:\n" +
				"the page of the captures given, a capture dropped onto the page, or with --live every\n" +
				"message captured on -i, pushed to every open page as it completes. The page's -Y box takes\n" +
				"-Y expressions, evaluated here; the selection flags choose what is served at all. Ctrl-C stops."},
		{Name: "demo", Short: "dissect a capture built into kdissect", Usage: "kdissect demo [flags]", Run: runDemo, Flags: func() *flag.FlagSet { fs, _ := captureFlags(); return fs },
			About: "Dissects a capture built into kdissect (a franz-go client and a broker), with the capture\n" +
				"command's flags: what kdissect does, before you have a capture of your own."},
		{Name: "version", Short: "version, revision, and the Kafka versions known", Usage: "kdissect version", Run: runVersion, Flags: cli.NoFlags("kdissect", "version"),
			About: "Prints kdissect's version and VCS revision, and the newest Kafka versions its built-in\n" +
				"definitions know. Also: kdissect --version."},
		cli.HelpCommand("kdissect"),
	}
}

// captureCommand is kdissect without a subcommand: dissect capture files.
func captureCommand() *cli.Command {
	return &cli.Command{Usage: "kdissect [flags] CAPTURE...\n  kdissect [flags] -r CAPTURE [-r CAPTURE]...\n  tcpdump -U -w - ... | kdissect [flags] -",
		About: "Dissects pcap and pcapng captures (gzipped too; - is stdin): reassembles TCP, cuts the\n" +
			"streams into Kafka frames, pairs responses with requests, and prints each message. A\n" +
			"capture from a pipe or FIFO (tcpdump -U -w - ... | kdissect -) is dissected as it arrives,\n" +
			"until its writer closes it, Ctrl-C, -c or --duration.",
		Run: runCapture, Flags: func() *flag.FlagSet { fs, _ := captureFlags(); return fs }}
}

// runVersion is "kdissect version" (and "kdissect --version").
func runVersion(cmd *cli.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cmd.Flags()
	if status, ok := cmd.Parse(fs, args, stdout, stderr); !ok {
		return status
	}
	if fs.NArg() > 0 {
		return cmd.UsageError(stderr, "version takes no arguments, got %q", fs.Args())
	}
	set, err := schema.Embedded()
	if err != nil {
		return cmd.Failed(stderr, "%v", err)
	}
	info, _ := debug.ReadBuildInfo()
	if _, err := io.WriteString(stdout, cli.Version(info, set)); err != nil {
		return cmd.Failed(stderr, "writing output: %v", err)
	}
	return cli.ExitOK
}
