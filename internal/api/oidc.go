package api

import (
	"net/http"

	"github.com/litek8s/litek8s/internal/auth"
)

// serveOIDC serves the service account issuer's OpenID discovery
// document and key set (auth.ServiceAccountTokens), readable by whom RBAC
// allows the non-resource URLs (kube binds
// system:service-account-issuer-discovery to all ServiceAccounts).
func (s *Server) serveOIDC(mux *http.ServeMux) {
	sa := s.cfg.ServiceAccounts
	if sa == nil {
		return
	}
	serve := func(body func() ([]byte, error), contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := body()
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("Cache-Control", "public, max-age=3600")
			w.Write(b)
		}
	}
	mux.Handle("GET /.well-known/openid-configuration", serve(sa.DiscoveryDocument, "application/json"))
	mux.Handle("GET "+auth.JWKSPath, serve(sa.KeySet, "application/jwk-set+json"))
}
