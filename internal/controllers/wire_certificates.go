package controllers

import (
	"log/slog"
	"time"

	"github.com/litek8s/litek8s/internal/controllers/csr"
	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// certificates builds the term's CSR approver and signer; caCert and
// caKey (PEM) are the cluster CA the signer signs with (without a key it
// signs nothing).
func certificates(kc *kit.Context, cfg Config, caCert, caKey []byte, log *slog.Logger) []kit.Controller {
	var ca *csr.CA
	if len(caKey) > 0 {
		var err error
		if ca, err = csr.ParseCA(caCert, caKey); err != nil {
			log.Error("the CSR signer cannot use the cluster CA", "err", err)
		}
	}
	return []kit.Controller{csr.NewApprover(kc, cfg.Certificates), csr.NewSigner(kc, cfg.Certificates, ca, time.Now)}
}
