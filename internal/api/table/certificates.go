package table

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// certificates.k8s.io: CertificateSigningRequests and ClusterTrustBundles
// as kube prints them.

var csrColumns = []Column{
	nameColumn,
	ageColumn,
	{Name: "SignerName", Type: "string", Description: certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]},
	{Name: "Requestor", Type: "string", Description: certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]},
	{Name: "RequestedDuration", Type: "string", Description: certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]},
	{Name: "Condition", Type: "string", Description: certificatesv1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
}

func csrCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.age(o.created)
	w.strOr(o.spec.Get("signerName").String(), "<none>")
	w.str(o.spec.Get("username").String())
	if e := o.spec.Get("expirationSeconds"); e.Exists() {
		w.duration(time.Duration(e.Int()) * time.Second)
	} else {
		w.str("<none>")
	}
	w.str(csrCondition(o))
}

// csrCondition is kube's summary: Denied, Approved or Pending, then
// ,Failed and ,Issued.
func csrCondition(o *object) string {
	var approved, denied, failed bool
	for _, c := range o.status.Get("conditions").Array() {
		switch c.Get("type").String() {
		case "Approved":
			approved = true
		case "Denied":
			denied = true
		case "Failed":
			failed = true
		}
	}
	s := "Pending"
	switch {
	case denied:
		s = "Denied"
	case approved:
		s = "Approved"
	}
	if failed {
		s += ",Failed"
	}
	if o.status.Get("certificate").String() != "" {
		s += ",Issued"
	}
	return s
}

var trustBundleColumns = []Column{
	nameColumn,
	{Name: "SignerName", Type: "string", Description: certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]},
}

func trustBundleCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.strOr(o.spec.Get("signerName").String(), "<none>")
}
