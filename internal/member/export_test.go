package member

// Internals the external tests (package member_test) use.
var (
	CAHashOf = caHashOf
	CertIPs  = certIPs
)
