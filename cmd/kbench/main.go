// Command kbench measures kdissect against a floor program and against tshark on a large,
// realistic capture, and makes that capture.
//
//	sudo go run ./cmd/kbench gen -o /tmp/kbench.pcap -size 200MB   # make the capture (root: netns, tcpdump)
//	go run ./cmd/kbench run /tmp/kbench.pcap                        # time floor, kdissect, tshark on it
//	go run ./cmd/kbench run -double /tmp/kbench.pcap                # ... and peak RSS on the capture twice over
//	sudo go run ./cmd/kbench soak -for 10m                          # kdissect live always on: RSS, drops, files
//
// gen runs a kfake cluster of three brokers and many franz-go clients (producers with every
// codec, consumers, consumer groups) inside a network namespace of its own whose loopback has
// an MTU of 1500 and no offloads, so that the capture holds segments of at most 1500 bytes as a
// real network would, and captures them with tcpdump until the file reaches the size asked for.
//
// run times, best of -n runs taken in turn, a floor program built in (kbench floor: pcap
// reading, layer decoding and TCP reassembly of every byte, no Kafka work), kdissect in each
// output mode and tshark, each as a child process whose peak RSS comes from its rusage, and
// prints a table.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

const usage = `kbench: kdissect's benchmark harness.

Usage:
  kbench gen -o FILE.pcap [-size 200MB] [-timeout 10m]   make a large realistic capture (root)
  kbench run [-n 3] [-double] [-kdissect BIN] FILE.pcap   time floor, kdissect and tshark on FILE
  kbench soak [-for 10m] [-rate 2] [-rotate 30s] [-ring 64MB]  kdissect live always on under a steady load (root)
  kbench conns -n 200000 -o FILE [-close]               a synthetic capture of many connections, one request each (no root)
  kbench outputs -kdissect BIN -o DIR CAPTURE...        every format's output of BIN on each capture, to compare two builds (diff -r)
  kbench cores [-n 5] [-cores 2] [-kdissect BIN] FILE.pcap  one core against several, and against the machine's own ceiling
  kbench floor [-count] FILE                              the floor program alone (run uses it; -count: bytes counted, not read)
  kbench help                                             this text

Run "kbench gen -h" or "kbench run -h" for their flags.
`

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks an error in the command line (exit status 2).
var errUsage = errors.New("usage")

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "gen":
		err = genMain(args[1:], stdout, stderr)
	case "run":
		err = runMain(args[1:], stdout, stderr)
	case "floor":
		err = floorMain(args[1:], stdout, stderr)
	case "conns":
		err = connsMain(args[1:], stdout, stderr)
	case "soak":
		err = soakMain(args[1:], stdout, stderr)
	case "outputs":
		err = outputsMain(args[1:], stdout, stderr)
	case "cores":
		err = coresMain(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprint(stderr, usage)
		fmt.Fprintf(stderr, "kbench: unknown command %q\n", args[0])
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintf(stderr, "kbench %s: %v\n", args[0], err)
		return 1
	}
}
