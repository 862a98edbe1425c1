package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kdissect/kdissect/internal/browsertest"
	"github.com/kdissect/kdissect/internal/testutil"
)

// TestServeWarns: an address other than loopback is said to expose the captured traffic, even
// when it cannot be had (192.0.2.1 is a documentation address: nothing is bound).
func TestServeWarns(t *testing.T) {
	_, errOut, code := kdissect(t, "serve", "--listen", "192.0.2.1:0", "../../pcaps/kgo-produce-fetch.pcap")
	if code != 1 || !strings.Contains(errOut, "not on loopback: the captured traffic is visible") || !strings.Contains(errOut, "--token random") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{
		{"serve", "--live", "../../pcaps/kgo-produce-fetch.pcap"},
		{"serve", "--live"},
		{"serve", "-i", "lo", "x.pcap"},
		{"serve", "--max-upload", "0"},
		{"serve", "--format", "json", "x.pcap"},
	} {
		if _, errOut, code := kdissect(t, args...); code != 2 || !strings.Contains(errOut, "Run 'kdissect serve --help'") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestServeAddresses: a page served on every address (0.0.0.0) is given as one URL for each
// IPv4 address of the machine's interfaces, loopback among them, not as the unreachable
// 0.0.0.0 or [::].
func TestServeAddresses(t *testing.T) {
	_, errOut, code := kdissect(t, "serve", "--listen", "0.0.0.0:0", "--duration", "1ms", pcap("kgo-produce-fetch.pcap"))
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	urls := regexp.MustCompile(`(?m)^  http://([^/]+)/$`).FindAllStringSubmatch(errOut, -1)
	var hosts []string
	for _, u := range urls {
		host, _, err := net.SplitHostPort(u[1])
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, host)
	}
	var want []string // the IPv4 addresses of the interfaces, loopback last
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip := a.(*net.IPNet).IP.To4(); ip != nil && !ip.IsLinkLocalUnicast() && !ip.IsLoopback() {
			want = append(want, ip.String())
		}
	}
	want = append(want, "127.0.0.1")
	if !strings.Contains(errOut, " messages on each address of this machine:\n") || !slices.Equal(hosts, want) ||
		strings.Contains(errOut, "http://0.0.0.0") || strings.Contains(errOut, "http://[::]") {
		t.Errorf("the page is given at %q, want one URL for each of %q:\n%s", hosts, want, errOut)
	}
}

// brokerHooks counts what a franz-go client wrote and read, per API key: every request and
// every response it exchanged.
type brokerHooks struct {
	mu            sync.Mutex
	writes, reads map[int16]int
}

func (h *brokerHooks) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h.mu.Lock()
		h.writes[key]++
		h.mu.Unlock()
	}
}

func (h *brokerHooks) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err == nil {
		h.mu.Lock()
		h.reads[key]++
		h.mu.Unlock()
	}
}

// pageCounts are the messages a page lists, per API key and direction.
func pageCounts(p *browsertest.Page) (requests, responses map[int16]int, total int) {
	var ms []struct {
		Key  int16  `json:"api_key"`
		Kind string `json:"kind"`
	}
	p.Eval(`Array.prototype.map.call(document.querySelectorAll('#rows tr[data-i]'), function (r) { var m = kdissect.messages()[+r.dataset.i]; return {api_key: m.api_key, kind: m.kind}; })`, &ms)
	requests, responses = map[int16]int{}, map[int16]int{}
	for _, m := range ms {
		if m.Kind == "response" {
			responses[m.Key]++
		} else {
			requests[m.Key]++
		}
	}
	return requests, responses, len(ms)
}

// TestServeLive runs "kdissect serve --live -i lo" as root against a kfake broker, opens the
// page in Chromium, and has a franz-go client produce record by record: each Produce response
// must be on the page before the client sends the next record, while the capture goes on (how
// soon is not asserted: a loaded machine may take seconds; the bound only stops a hang); a
// second page opened mid-way gets everything from then on; at the end both list every request
// and response the client exchanged, and the byte/field contract holds.
// liveHang is how long TestServeLive waits for the page to show what it must before it gives
// up: a guard against a hang, not a bound the page must meet.
const liveHang = 30 * time.Second

func TestServeLive(t *testing.T) {
	testutil.NeedRoot(t)
	lo := loopback(t)
	b := browsertest.Start(t)
	bin := kdissectBinary(t)
	_, addr, port := newKfake(t, "kdissect-serve")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()

	cmd := exec.Command(bin, "serve", "--live", "-i", lo, "-p", strconv.Itoa(port), "--listen", listen)
	stderr := newWatchedBuffer("serving the live page on http://" + listen + "/")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case <-stderr.seen:
	case err := <-exited:
		t.Fatalf("kdissect serve exited: %v\n%s", err, stderr)
	case <-time.After(20 * time.Second):
		t.Fatalf("kdissect serve did not start within 20s:\n%s", stderr)
	}
	url := "http://" + listen + "/"
	first := b.Open(t, url)

	hooks := &brokerHooks{writes: map[int16]int{}, reads: map[int16]int{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("serve-live"), kgo.DefaultProduceTopic("kdissect-serve"),
		kgo.WithHooks(hooks), kgo.RetryTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const records = 6
	var second *browsertest.Page
	for i := range records {
		if i == records/2 {
			second = b.Open(t, url)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "served live %d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		answered := time.Now()
		for _, p := range []*browsertest.Page{first, second} {
			if p == nil {
				continue
			}
			for {
				_, responses, _ := pageCounts(p)
				if responses[0] >= i+1 {
					break
				}
				if time.Since(answered) > liveHang {
					t.Fatalf("record %d: the page shows %d Produce responses %v after the client got its response", i, responses[0], liveHang)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	cl.Close()
	hooks.mu.Lock()
	writes, reads := hooks.writes, hooks.reads
	hooks.mu.Unlock()
	deadline := time.Now().Add(liveHang)
	for _, p := range []*browsertest.Page{first, second} {
		for {
			requests, responses, _ := pageCounts(p)
			same := fmt.Sprint(requests) == fmt.Sprint(writes) && fmt.Sprint(responses) == fmt.Sprint(reads)
			if same {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page lists requests %v and responses %v by API key; the client wrote %v and read %v", requests, responses, writes, reads)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var frames [2][]int
	for i, p := range []*browsertest.Page{first, second} {
		p.Eval(`Array.prototype.map.call(document.querySelectorAll('#rows tr[data-frame]'), function (r) { return +r.dataset.frame; })`, &frames[i])
	}
	if fmt.Sprint(frames[0]) != fmt.Sprint(frames[1]) {
		t.Errorf("the first page lists frames %v, the second %v", frames[0], frames[1])
	}
	// The byte/field contract on every message of the live page.
	for i := range frames[0] {
		c := first.CheckFields(i)
		for _, e := range c.Compare(c.Fields) {
			t.Errorf("message %d: %s", i, e)
		}
	}
	// The picture of the live page in docs/workshop.md (with -update): filtered by -Y, a Produce request
	// selected.
	if *update {
		first.Eval(`(function () { var b = document.getElementById('f-y'); b.value = 'api == "Produce" && req.Acks == -1'; document.getElementById('y-apply').click(); return true; })()`, nil)
		for deadline := time.Now().Add(10 * time.Second); ; {
			var n int
			first.Eval(`document.getElementById('f-y').getAttribute('data-applied') ? document.querySelectorAll('#rows tr[data-frame]').length : 0`, &n)
			if n >= 2*records {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the filtered live page lists %d messages", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
		first.Eval(`(function () { var ms = kdissect.messages(); for (var i = ms.length - 1; i >= 0; i--) if (ms[i].api_name === 'Produce' && ms[i].kind === 'request') { kdissect.select(i); break; } var v = Array.prototype.filter.call(document.querySelectorAll('#tree tr'), function (r) { return /value$/.test((r.querySelector('td.f') || {}).textContent || ''); })[0]; if (v) v.click(); return true; })()`, nil)
		first.Screenshot(filepath.Join("..", "..", "docs", "live.png"), 1280, 720)
	}
	first.Check(func(u string) bool { return strings.HasPrefix(u, url) })
	second.Check(func(u string) bool { return strings.HasPrefix(u, url) })

	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("kdissect serve: %v\n%s", err, stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("kdissect serve did not stop on SIGINT:\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "packets captured") {
		t.Errorf("stderr: %s", stderr)
	}
}
