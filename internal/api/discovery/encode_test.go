package discovery

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEncodeLikeKube re-encodes kube-apiserver's own documents: our encoder
// must give back the captured bytes, and for aggregated discovery the
// captured Etag. This covers whole documents, beyond the few resources we
// serve.
func TestEncodeLikeKube(t *testing.T) {
	for _, name := range []string{"discovery/api-aggregated", "discovery/apis-aggregated"} {
		t.Run(name, func(t *testing.T) {
			g := readGolden(t, name, "json")
			doc, err := encodeAggregated(decodeAggregated(t, g.body))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(doc.compact, g.body) {
				t.Errorf("re-encoded body differs from the capture")
			}
			if want := g.respHeader.Get("Etag"); doc.etag != want {
				t.Errorf("Etag = %s, golden %s", doc.etag, want)
			}
		})
	}
	legacy := []struct {
		name string
		obj  any
	}{
		{"discovery/api", &metav1.APIVersions{}},
		{"discovery/api-v1", &metav1.APIResourceList{}},
		{"discovery/apis", &metav1.APIGroupList{}},
		{"discovery/apis-apps", &metav1.APIGroup{}},
		{"discovery/apis-apps-v1", &metav1.APIResourceList{}},
	}
	for _, tt := range legacy {
		t.Run(tt.name, func(t *testing.T) {
			g := readGolden(t, tt.name, "json")
			if err := json.Unmarshal(g.body, tt.obj); err != nil {
				t.Fatal(err)
			}
			doc, err := encode(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(doc.compact, g.body) {
				t.Errorf("re-encoded:\n%s\ncapture:\n%s", doc.compact, g.body)
			}
		})
	}
}

// TestStorageVersionHash checks the hash against kube-apiserver's values.
func TestStorageVersionHash(t *testing.T) {
	tests := []struct{ group, version, kind, want string }{
		{"", "v1", "ConfigMap", "qFsyl6wFWjQ="},
		{"", "v1", "Pod", "xPOwRZ+Yhw8="},
		{"", "v1", "Namespace", "Q3oi5N2YM8M="},
		{"apps", "v1", "Deployment", "8aSe+NMegvE="},
		{"coordination.k8s.io", "v1", "Lease", "gqkMMb/YqFM="},
	}
	for _, tt := range tests {
		if got := storageVersionHash(tt.group, tt.version, tt.kind); got != tt.want {
			t.Errorf("storageVersionHash(%q, %q, %q) = %q, want %q", tt.group, tt.version, tt.kind, got, tt.want)
		}
	}
}

// TestPretty: curl, wget and browsers, ?pretty=true and the pretty=1 media
// type parameter get indented JSON without a trailing newline, like
// kube-apiserver; ?pretty=false wins over the User-Agent.
func TestPretty(t *testing.T) {
	srv := newTestServer(t, goldenConfig())
	const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	tests := []struct {
		path, query, ua, accept string
		pretty                  bool
	}{
		{"/apis/apps/v1", "", "curl/7.88.1", "application/json", true},
		{"/apis/apps/v1", "", "Wget/1.21", "", true},
		{"/api", "", "Mozilla/5.0 (X11)", "", true},
		{"/apis/apps/v1", "?pretty=true", "golden-curl/1.0", "application/json", true},
		{"/apis/apps/v1", "?pretty=false", "curl/7.88.1", "application/json", false},
		{"/apis/apps/v1", "", "golden-curl/1.0", "application/json;pretty=1", true},
		{"/apis", "", "curl/7.88.1", v2, true},
		{"/apis", "", "golden-curl/1.0", v2, false},
	}
	for _, tt := range tests {
		t.Run(tt.path+tt.query+" "+tt.ua+" "+tt.accept, func(t *testing.T) {
			compactResp, compact := get(t, srv, tt.path, tt.accept)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+tt.path+tt.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("User-Agent", tt.ua)
			req.Header.Set("Accept", tt.accept)
			resp, body := send(t, req)
			if ct := resp.Header.Get("Content-Type"); ct != compactResp.Header.Get("Content-Type") {
				t.Errorf("Content-Type %q, compact answer has %q", ct, compactResp.Header.Get("Content-Type"))
			}
			want := compact
			if tt.pretty {
				var buf bytes.Buffer
				if err := json.Indent(&buf, bytes.TrimSuffix(compact, []byte("\n")), "", "  "); err != nil {
					t.Fatal(err)
				}
				want = buf.Bytes()
			}
			if !bytes.Equal(body, want) {
				t.Errorf("body:\n%s\nwant:\n%s", body, want)
			}
		})
	}
}
