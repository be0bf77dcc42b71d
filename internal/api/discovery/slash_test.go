package discovery

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// The roots and a group answer with a trailing slash as without (kube
// does; the e2e Discovery tests and kubectl proxy ask for /apis/).
func TestTrailingSlash(t *testing.T) {
	srv := newTestServer(t, DefaultConfig())
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	for _, p := range []string{"/api", "/apis", "/apis/apps"} {
		code, want := get(p)
		slashCode, got := get(p + "/")
		if code != http.StatusOK || slashCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Errorf("GET %s/: %d %s; GET %s: %d %s", p, slashCode, got, p, code, want)
		}
	}
}
