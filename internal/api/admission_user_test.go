package api

import (
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// A status update keeps the stored Approved/Denied conditions, in the
// places the client sent them when it sent as many (the e2e CSR spec
// appends a condition after Approved and expects it last), else appended.
func TestKeepApproval(t *testing.T) {
	cond := func(typ certificatesv1.RequestConditionType, reason string) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: typ, Reason: reason}
	}
	old := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
		cond("ApprovalPatch", "e2e"), cond(certificatesv1.CertificateApproved, "stored")}}}
	for _, tt := range []struct {
		name string
		sent []certificatesv1.CertificateSigningRequestCondition
		want []string // type/reason in order
	}{
		{"same count, changed reason", []certificatesv1.CertificateSigningRequestCondition{cond("ApprovalPatch", "e2e"),
			cond(certificatesv1.CertificateApproved, "forged"), cond("StatusUpdate", "E2E")},
			[]string{"ApprovalPatch/e2e", "Approved/stored", "StatusUpdate/E2E"}},
		{"removed", []certificatesv1.CertificateSigningRequestCondition{cond("StatusUpdate", "E2E")},
			[]string{"StatusUpdate/E2E", "Approved/stored"}},
		{"denied added", []certificatesv1.CertificateSigningRequestCondition{cond(certificatesv1.CertificateDenied, "x"),
			cond(certificatesv1.CertificateApproved, "stored")}, []string{"Approved/stored"}},
	} {
		csr := &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: tt.sent}}
		keepApproval(csr, old)
		var got []string
		for _, c := range csr.Status.Conditions {
			got = append(got, string(c.Type)+"/"+c.Reason)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
