package api_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/api/aggregator"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// aggServer is a single-member store behind the API with (agg) or
// without an Aggregator, a Lease "l" in "bench" and, with one, an
// APIService of another group.
func aggServer(b *testing.B, agg bool) *api.Server {
	b.Helper()
	sc := raftstore.DefaultConfig()
	sc.DataDir, sc.RaftAddr, sc.Bootstrap = b.TempDir(), "127.0.0.1:0", true
	sc.HeartbeatTimeout, sc.ElectionTimeout, sc.LeaderLeaseTimeout = 100*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond
	sc.Derive, sc.Logger = api.Derive, slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := raftstore.Open(sc)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ac := api.DefaultConfig()
	ac.Token, ac.Logger = "t", sc.Logger
	if agg {
		a, err := aggregator.New(aggregator.Config{Store: st, Logger: sc.Logger,
			ClientCert: func() (*tls.Certificate, error) { return nil, nil }})
		if err != nil {
			b.Fatal(err)
		}
		ac.Aggregator = a
	}
	srv, err := api.New(ac, st)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for srv.EnsureNamespaces(ctx, "bench") != nil {
		if ctx.Err() != nil {
			b.Fatal(ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
	post := func(path, body string) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("create %s: %d %s", path, rec.Code, rec.Body)
		}
	}
	post("/apis/coordination.k8s.io/v1/namespaces/bench/leases", `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"x"}}`)
	if agg {
		post("/apis/apiregistration.k8s.io/v1/apiservices", `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io"},"spec":{"group":"metrics.k8s.io","version":"v1beta1","groupPriorityMinimum":100,"versionPriority":100,"insecureSkipTLSVerify":true,"service":{"namespace":"kube-system","name":"metrics-server"}}}`)
	}
	return srv
}

// BenchmarkServeGroupGet is a GET of a built-in resource of a named group
// (the path the aggregator's routing check sits on), without an
// Aggregator (as before aggregation) and with one holding an APIService.
func BenchmarkServeGroupGet(b *testing.B) {
	for _, agg := range []bool{false, true} {
		name := "no-aggregator"
		if agg {
			name = "aggregator"
		}
		b.Run(name, func(b *testing.B) {
			srv := aggServer(b, agg)
			req := httptest.NewRequest(http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/bench/leases/l?resourceVersion=0", nil)
			req.Header.Set("Authorization", "Bearer t")
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				w.n = 0
				srv.ServeHTTP(w, req)
			}
			if w.n == 0 {
				b.Fatal("empty answer")
			}
		})
	}
}
