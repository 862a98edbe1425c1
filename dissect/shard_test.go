package dissect

import (
	"fmt"
	"io"
	"testing"

	"github.com/kdissect/kdissect/capture"
)

// TestShardOfSymmetric: both directions of a connection go to the same shard, and the
// connections of a capture are spread over the shards.
func TestShardOfSymmetric(t *testing.T) {
	r, err := capture.Open("../pcaps/kgo-group-3brokers.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const n = 3
	byConn := map[string]int{}
	used := map[int]bool{}
	for {
		seg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		w := shardOf(seg, n)
		if w < 0 || w >= n {
			t.Fatalf("shard %d of %d", w, n)
		}
		// The connection, the same whichever way the segment goes.
		a := fmt.Sprintf("%v:%d", seg.Net.Src(), seg.TCP.SrcPort)
		b := fmt.Sprintf("%v:%d", seg.Net.Dst(), seg.TCP.DstPort)
		k := min(a, b) + " " + max(a, b)
		if prev, ok := byConn[k]; ok && prev != w {
			t.Fatalf("packet %d of connection %s: shard %d, earlier packets went to %d", seg.Num, k, w, prev)
		}
		byConn[k] = w
		used[w] = true
	}
	if len(byConn) < 4 || len(used) < 2 {
		t.Errorf("%d connections over %d shards: want them spread", len(byConn), len(used))
	}
}
