package certs

import (
	"crypto/x509"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the cert label.
const (
	CertMember  = "member"
	CertServing = "serving"
	CertCA      = "ca"
)

type metrics struct {
	expiry *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{expiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "litek8s_certificate_expiry_timestamp_seconds",
		Help: "NotAfter of each certificate this member uses, in seconds since the epoch (cert: member, serving, ca).",
	}, []string{"cert"})}
	if reg != nil {
		reg.MustRegister(m.expiry)
	}
	return m
}

func (m *metrics) set(cert string, c *x509.Certificate) {
	m.expiry.WithLabelValues(cert).Set(float64(c.NotAfter.Unix()))
}
