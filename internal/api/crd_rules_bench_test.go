package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// benchCRD is a namespaced CRD "Bolt" whose spec schema carries rules
// (x-kubernetes-validations) or not.
func benchCRD(rules string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	 "metadata":{"name":"bolts.example.com"},
	 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"bolts","kind":"Bolt"},
	  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
	   "spec":{"type":"object"` + rules + `,"properties":{"min":{"type":"integer"},"max":{"type":"integer"},"name":{"type":"string","maxLength":64},
	    "ports":{"type":"array","maxItems":8,"items":{"type":"object","properties":{"port":{"type":"integer"}}}}}}}}}}]}}`
}

// BenchmarkCreateCustomResource creates custom resources through the API
// (dryRun: admission, defaulting and validation without the Raft write)
// of a CRD without rules (what every write of such a CRD costs) and with
// three rules.
func BenchmarkCreateCustomResource(b *testing.B) {
	for _, c := range []struct{ name, rules string }{
		{"no-rules", ""},
		{"rules", `,"x-kubernetes-validations":[{"rule":"self.min <= self.max","message":"min above max"},` +
			`{"rule":"self.name.startsWith('b')"},{"rule":"self.ports.all(p, p.port > 0 && p.port < 65536)"}]`},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := newAPIServer(b, nil, "bench")
			post := func(path, body string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer t")
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				return rec
			}
			if rec := post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", benchCRD(c.rules)); rec.Code != http.StatusCreated {
				b.Fatalf("CRD: %d %s", rec.Code, rec.Body)
			}
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				body := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Bolt","metadata":{"name":"b-%d"},`+
					`"spec":{"min":1,"max":3,"name":"bolt","ports":[{"port":80},{"port":443}]}}`, i)
				if rec := post("/apis/example.com/v1/namespaces/bench/bolts?dryRun=All", body); rec.Code != http.StatusCreated {
					b.Fatalf("create: %d %s", rec.Code, rec.Body)
				}
				i++
			}
		})
	}
}
