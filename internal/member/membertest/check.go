package membertest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// Eventually calls f until it returns nil, failing the test with f's last
// error after d.
func Eventually(t testing.TB, d time.Duration, f func() error) {
	t.Helper()
	EventuallyEvery(t, d, 20*time.Millisecond, f)
}

// EventuallyEvery is Eventually calling f every interval (for checks that
// run a command, e.g. kubectl).
func EventuallyEvery(t testing.TB, d, interval time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %v: %v", d, err)
		}
		time.Sleep(interval)
	}
}

// SameObjects waits until every running member lists the same objects
// (namespace/name@resourceVersion uid) at each API path, e.g.
// "/api/v1/configmaps", and returns member-independent listings by path.
func (c *Cluster) SameObjects(ctx context.Context, paths ...string) map[string][]string {
	c.t.Helper()
	out := make(map[string][]string)
	Eventually(c.t, 10*time.Second, func() error {
		for _, p := range paths {
			var ref []string
			refIdx := -1
			for i, m := range c.members {
				if m == nil {
					continue
				}
				got, err := c.listMeta(ctx, i, p)
				if err != nil {
					return fmt.Errorf("member %d: %w", i, err)
				}
				if refIdx < 0 {
					ref, refIdx = got, i
				} else if strings.Join(got, "\n") != strings.Join(ref, "\n") {
					return fmt.Errorf("%s: member %d has\n%s\nmember %d has\n%s", p, i,
						strings.Join(got, "\n"), refIdx, strings.Join(ref, "\n"))
				}
			}
			out[p] = ref
		}
		return nil
	})
	return out
}

func (c *Cluster) listMeta(ctx context.Context, i int, path string) ([]string, error) {
	raw, err := c.Clientset(i).Discovery().RESTClient().Get().AbsPath(path).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var l struct {
		Items []struct {
			Metadata struct {
				Namespace, Name, ResourceVersion, UID string
			}
		}
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("list %s: %w", path, err)
	}
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		m := it.Metadata
		out = append(out, fmt.Sprintf("%s/%s@%s %s", m.Namespace, m.Name, m.ResourceVersion, m.UID))
	}
	sort.Strings(out)
	return out, nil
}

// CheckGoroutines waits up to 10 s for the goroutine count to fall back to
// before (give or take 2), and fails the test with every stack if it does
// not (StartCluster checks it on t.Cleanup).
func CheckGoroutines(t testing.TB, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 { // +2: runtime and testing helpers that come and go
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Errorf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(),
				buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
