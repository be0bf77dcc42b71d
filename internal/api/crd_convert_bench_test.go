package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// convBenchCRD has two versions and a conversion webhook that is never
// reached: the benchmark reads the storage version, which takes the
// zero-copy list path of conversion None.
const convBenchCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.bench.example.com"},
 "spec":{"group":"bench.example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
  "conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://127.0.0.1:1/convert"}}},
  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
    "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]},
   {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// BenchmarkServeCustomList lists 1,000 custom resources of a CRD with a
// conversion webhook in its storage version (JSON, a page, a Table):
// what conversion must leave as it costs with conversion None.
func BenchmarkServeCustomList(b *testing.B) {
	srv := newAPIServer(b, nil, "bench")
	do := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	if rec := do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", convBenchCRD); rec.Code != http.StatusCreated {
		b.Fatalf("CRD: %d %s", rec.Code, rec.Body)
	}
	for i := range 1000 {
		body := fmt.Sprintf(`{"apiVersion":"bench.example.com/v1","kind":"Widget","metadata":{"name":"w-%05d","labels":{"shard":"s%d"}},"spec":{"size":%d,"text":"some longer text to make the object realistic"}}`, i, i%10, i)
		if rec := do("POST", "/apis/bench.example.com/v1/namespaces/bench/widgets", body); rec.Code != http.StatusCreated {
			b.Fatalf("create %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	for _, c := range []struct{ name, query, accept string }{
		{"json", "", "application/json"},
		{"page", "&limit=50", "application/json"},
		{"table", "&limit=50", tableAccept},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/apis/bench.example.com/v1/namespaces/bench/widgets?resourceVersion=0"+c.query, nil)
			req.Header.Set("Authorization", "Bearer t")
			req.Header.Set("Accept", c.accept)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				w.n = 0
				srv.ServeHTTP(w, req)
			}
			b.SetBytes(int64(w.n))
		})
	}
}
