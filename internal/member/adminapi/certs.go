package adminapi

import "time"

// Cert is one certificate a member uses.
type Cert struct {
	// Name is member (the member certificate: Raft, the API, calls to
	// other members), serving (the operator's API serving certificate) or
	// ca (the cluster CA); the cert label of
	// litek8s_certificate_expiry_timestamp_seconds.
	Name      string    `json:"name"`
	Subject   string    `json:"subject"`
	Issuer    string    `json:"issuer"`
	Serial    string    `json:"serial"`
	NotBefore time.Time `json:"notBefore"`
	NotAfter  time.Time `json:"notAfter"`
	// RenewAt is when the member renews it itself (absent: it does not).
	RenewAt *time.Time `json:"renewAt,omitempty"`
	// File is where it is kept; Where what it serves.
	File  string `json:"file"`
	Where string `json:"where"`
}

// CertList is one member's certificates, GET /admin/v1/certs.
type CertList struct {
	Member string `json:"member"`
	Certs  []Cert `json:"certs"`
}
