// Package certs owns a running member's certificates: the member
// certificate, issued by the cluster CA (every member holds the CA key) for
// the member's addresses with organization datadir.MemberOrg, which serves
// Raft and the API and authenticates the member to the others; and, when
// the operator brings one (--tls-cert-file/--tls-private-key-file), the
// API's serving certificate for clients.
//
// The member certificate renews itself at 2/3 of its lifetime (Config.
// Validity, a year by default), is kept in the data dir's tls/member.crt
// and tls/member.key (a restart reuses it while it is before its renewal
// time) and is swapped atomically: the tls.Config callbacks (GetCertificate,
// GetClientCertificate) hand every new handshake the current one, and
// connections already open keep theirs. The operator's serving files are
// read again every Config.ReloadInterval and on Rotate, and swapped in when
// their content changed and they are a valid pair.
//
// The expiry of each certificate is the gauge
// litek8s_certificate_expiry_timestamp_seconds{cert="member|serving|ca"}.
//
// Concurrency: the callbacks and List are safe from any goroutine and take
// no lock; Rotate and Run's renewals are serialized by Manager.mu. Run(ctx)
// is the only goroutine; it returns when ctx ends.
package certs
