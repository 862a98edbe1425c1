package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Stem names what is written for a capture: its base name without the extensions of captures
// (.pcap, .pcapng, .cap, then .gz); "stdin" for -.
func Stem(name string) string {
	if name == "-" {
		return "stdin"
	}
	base := filepath.Base(name)
	stem := strings.TrimSuffix(base, ".gz")
	for _, ext := range []string{".pcapng", ".pcap", ".cap"} {
		stem = strings.TrimSuffix(stem, ext)
	}
	if stem == "" {
		return base
	}
	return stem
}

// Overwrites reports whether writing the file out would overwrite one of the captures (the
// same file, whatever its name), and which.
func Overwrites(out string, captures []string) (string, bool) {
	ost, err := os.Stat(out)
	if err != nil {
		return "", false
	}
	for _, name := range captures {
		if st, err := os.Stat(name); err == nil && os.SameFile(st, ost) {
			return name, true
		}
	}
	return "", false
}

// IsCaptureFile reports whether the file name exists and starts as a capture does (pcap or
// pcapng, gzipped or not), judged by its first bytes as Open judges them. A text or Parquet
// output written over it would lose the packets, so a writer asks before it truncates.
func IsCaptureFile(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if n, _ := io.ReadFull(f, b[:]); n < 4 {
		return false
	}
	if binary.BigEndian.Uint16(b[:2]) == gzipMagic {
		return true
	}
	switch binary.BigEndian.Uint32(b[:]) {
	case magicPcapMicro, magicPcapMicroSwapped, magicPcapNano, magicPcapNanoSwapped,
		magicPcapKuznetzov, magicPcapKuznetzovSw, magicPcapng:
		return true
	}
	return false
}

// Outputs names the file written for each capture in dir (its Stem and ext), or says which two
// captures would be written to the same file.
func Outputs(dir, ext string, captures []string) ([]string, error) {
	outs := make([]string, len(captures))
	taken := map[string]string{}
	for i, name := range captures {
		outs[i] = filepath.Join(dir, Stem(name)+ext)
		if other, ok := taken[outs[i]]; ok {
			return nil, fmt.Errorf("%s and %s would both be written to %s", other, name, outs[i])
		}
		taken[outs[i]] = name
	}
	return outs, nil
}
