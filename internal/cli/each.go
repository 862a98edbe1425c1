package cli

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// Each runs job for each of names, parallel at a time, each with a stdout and a stderr of its
// own. What a job says on stderr is shown as soon as it and the jobs before it have ended, in
// the order of names whatever order they end in (a usage error said alike by several jobs,
// once); what it says on stdout is shown at the end, in the order of names, under a
// "==> name <==" heading when there are several. The status is the worst of the jobs'.
func Each(names []string, parallel int, stdout, stderr io.Writer, job func(i int, stdout, stderr io.Writer) int) int {
	jobs := make(chan int)
	results := make([]struct {
		stdout, stderr bytes.Buffer
		status         int
		done           bool
	}, len(names))
	var mu sync.Mutex
	said := map[string]bool{}
	shown := 0 // the jobs whose stderr is shown
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range jobs {
				r := &results[i]
				status := job(i, &r.stdout, &r.stderr)
				mu.Lock()
				r.status, r.done = status, true
				for ; shown < len(results) && results[shown].done; shown++ {
					r := &results[shown]
					if s := r.stderr.String(); r.status != ExitUsage || !said[s] {
						said[s] = true
						io.WriteString(stderr, s)
					}
				}
				mu.Unlock()
			}
		})
	}
	for i := range names {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	status := ExitOK
	for i := range results {
		r := &results[i]
		if r.stdout.Len() > 0 {
			if len(names) > 1 {
				fmt.Fprintf(stdout, "==> %s <==\n", names[i])
			}
			stdout.Write(r.stdout.Bytes())
		}
		status = max(status, r.status)
	}
	return status
}
