package api_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/internal/api"
	"github.com/litek8s/litek8s/internal/encryption"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// secretServer is benchServer with n Secrets, stored encrypted with
// provider ("" for no encryption configuration).
func secretServer(tb testing.TB, n int, provider string) *api.Server {
	tb.Helper()
	srv := newAPIServerStore(tb, func(c *raftstore.Config) {
		if provider != "" {
			c.Transformer = benchTransformer(tb, provider)
		}
	}, nil, "bench")
	for i := range n {
		createSecret(tb, srv, i)
	}
	return srv
}

func benchTransformer(tb testing.TB, provider string) *encryption.Transformer {
	tb.Helper()
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	c, err := encryption.Parse([]byte(`{"apiVersion":"apiserver.config.k8s.io/v1","kind":"EncryptionConfiguration","resources":[{"resources":["secrets"],"providers":[{"` +
		provider + `":{"keys":[{"name":"k","secret":"` + key + `"}]}}]}]}`))
	if err != nil {
		tb.Fatal(err)
	}
	tr, err := encryption.New(c)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

func createSecret(tb testing.TB, srv *api.Server, i int) {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s-%06d","labels":{"app":"bench","shard":"s%d"}},"type":"Opaque","data":{"password":"c29tZSBzZWNyZXQgdmFsdWU=","token":"%s"}}`,
		i, i%10, base64.StdEncoding.EncodeToString([]byte(strings.Repeat("t", 64))))
	req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/bench/secrets", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		tb.Fatalf("create %d: %d %s", i, rec.Code, rec.Body)
	}
}

// BenchmarkServeListSecrets lists Secrets without and with encryption at
// rest: memory holds them decrypted, so a list costs the same.
func BenchmarkServeListSecrets(b *testing.B) {
	for _, provider := range []string{"", "aesgcm"} {
		srv := secretServer(b, 1000, provider)
		name := provider
		if name == "" {
			name = "none"
		}
		for _, c := range []struct{ name, accept string }{{"json", "application/json"}, {"table", tableAccept}} {
			b.Run(fmt.Sprintf("%s/%s/1000", name, c.name), func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/bench/secrets?resourceVersion=0", nil)
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
}

// BenchmarkCreateSecret creates Secrets through the API on a real
// single-member store (Raft, its log on disk), without and with each
// provider: encryption before Propose, decryption at apply.
func BenchmarkCreateSecret(b *testing.B) {
	for _, provider := range []string{"", "aesgcm", "aescbc", "secretbox"} {
		name := provider
		if name == "" {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			srv := secretServer(b, 0, provider)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				createSecret(b, srv, i)
				i++
			}
		})
	}
}
