package crdconversion

import (
	"encoding/pem"
	"net/http/httptest"
)

// certPEM is the PEM of srv's certificate (httptest's is self-signed for
// 127.0.0.1).
func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
