package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdissect/kdissect/pcaps"
)

// TestStatsShallow: on every capture of pcaps/, the tables of --stats --format none, whose
// decode is shallow (only the fields that facts and the analyses' Reads name get nodes), are
// those written after the messages of --format diagram, whose decode is full. A field an
// analysis reads but does not name in its Reads makes them differ. Both decode records as far
// as their batch headers (none's default), since what producers tells of decompressed bytes
// needs the records themselves.
func TestStatsShallow(t *testing.T) {
	for _, file := range captures(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			args := []string{"--stats", "--records", "headers", "-p", pcaps.Ports}
			if kl := strings.TrimSuffix(file, filepath.Ext(file)) + ".keylog"; exists(kl) {
				args = append(args, "--tls-keylog", kl)
			}
			shallow, errOut, code := kdissect(t, append(args, "--format", "none", file)...)
			if code != 0 {
				t.Fatalf("--format none: exit %d: %s", code, errOut)
			}
			full, errOut, code := kdissect(t, append(args, "--format", "diagram", file)...)
			if code != 0 {
				t.Fatalf("--format diagram: exit %d: %s", code, errOut)
			}
			got := strings.Split(shallow, "\n")
			want := strings.Split(full, "\n")
			want = want[max(0, len(want)-len(got)):]
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("line %d of the tables of --format none:\n%s\nafter the messages of --format diagram:\n%s", i+1, got[i], want[i])
				}
			}
			if shallow != "" && !strings.HasSuffix(full, "\n\n"+shallow) {
				t.Errorf("the tables of --format none are not all those of --format diagram:\n%s", shallow)
			}
		})
	}
}
