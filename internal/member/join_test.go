package member

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// A first join whose seed cannot be reached logs every attempt (the seed,
// the attempt's number, its error) and gives up, when its time is up,
// with an error naming the address it tried; with --ca-hash too.
func TestJoinUnreachableSeed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seed := "https://" + ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	for _, caHash := range []string{"", "sha256:00"} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		start := time.Now()
		_, err := fetchSecrets(ctx, log, (&net.Dialer{}).DialContext, seed, "token", caHash)
		cancel()
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("ca-hash %q: gave up after %s, want about 2s", caHash, took)
		}
		if err == nil || !strings.Contains(err.Error(), "gave up after") || !strings.Contains(err.Error(), seed) {
			t.Fatalf("ca-hash %q: %v, want an error naming %s", caHash, err, seed)
		}
		out := buf.String()
		for _, want := range []string{"level=WARN", "seed=" + seed, "attempt=1 ", "attempt=2 ", "connection refused"} {
			if !strings.Contains(out, want) {
				t.Errorf("ca-hash %q: the log does not say %q:\n%s", caHash, want, out)
			}
		}
		if n := strings.Count(out, "\n"); n > 10 {
			t.Errorf("ca-hash %q: %d lines in 2s: the retries do not back off:\n%s", caHash, n, out)
		}
	}
}
