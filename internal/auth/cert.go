package auth

import (
	"crypto/x509"
	"net/http"
)

// VerifiedCert returns the client certificate the TLS handshake verified
// (nil: none).
func VerifiedCert(r *http.Request) *x509.Certificate {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil
	}
	return r.TLS.VerifiedChains[0][0]
}
