package member

import (
	"net/http"

	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/datadir"
)

// serveCerts answers with this member's certificates (each member answers
// for itself: `ctl certs list --all` asks every one).
func (m *Member) serveCerts(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, m.certList())
	return nil
}

// serveCertRotate issues this member a new member certificate now (and
// reads the operator's serving files again); new connections get it,
// open ones keep the old one until they close.
func (m *Member) serveCertRotate(w http.ResponseWriter, r *http.Request) error {
	if err := decodeAdminBody(r, &struct{}{}, true); err != nil {
		return err
	}
	if err := m.certs.Rotate(); err != nil {
		return err
	}
	m.log.Info("admin: member certificate rotated")
	httpx.WriteJSON(w, http.StatusOK, m.certList())
	return nil
}

func (m *Member) certList() adminapi.CertList {
	l := adminapi.CertList{Member: m.cfg.ID}
	for _, c := range m.certs.List() {
		ac := adminapi.Cert{Name: c.Name, Subject: c.Subject, Issuer: c.Issuer, Serial: c.Serial,
			NotBefore: c.NotBefore, NotAfter: c.NotAfter, File: c.File, Where: c.Where}
		if !c.RenewAt.IsZero() {
			renew := c.RenewAt
			ac.RenewAt = &renew
		}
		l.Certs = append(l.Certs, ac)
	}
	return l
}

// kubeconfigSecrets are the secrets admin kubeconfigs are made from: with
// an operator's serving certificate, the CA data trusts its issuers too.
func (m *Member) kubeconfigSecrets() datadir.Secrets {
	kc := m.sec
	kc.CACert = m.certs.ClientCABundle()
	return kc
}
