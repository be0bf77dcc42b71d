package member

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/member/certs"
	"github.com/litek8s/litek8s/internal/member/datadir"
)

// Traffic between members is mutual TLS with certificates of the cluster
// CA whose organization is datadir.MemberOrg: Raft's connections (raftTLS), the
// internal endpoints under the API listener (apiTLS verifies the chain,
// peerAuth the organization) and the requests a member sends another
// (peerClientTLS: write forwarding, read index, join). Every config takes
// the member's current certificate from certs.Manager at each handshake, so
// a renewed certificate serves new connections at once.

// verifyMember checks that cert was issued by the cluster CA to a member.
func verifyMember(pool *x509.CertPool, cert *x509.Certificate) error {
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return fmt.Errorf("certificate of %q: %w", cert.Subject.CommonName, err)
	}
	return memberOrgOf(cert)
}

// memberOrgOf checks that cert names datadir.MemberOrg.
func memberOrgOf(cert *x509.Certificate) error {
	if !slices.Contains(cert.Subject.Organization, datadir.MemberOrg) {
		return fmt.Errorf("certificate of %q is not a member's (organization %v)", cert.Subject.CommonName,
			cert.Subject.Organization)
	}
	return nil
}

// raftTLS is the config of Raft's connections, for both ends: each side
// presents its member certificate and requires one from the other. Raft
// dials addresses, not names, and every member's certificate is checked
// against the cluster CA instead of a host name.
func raftTLS(pool *x509.CertPool, cm *certs.Manager) *tls.Config {
	return &tls.Config{
		GetCertificate:       cm.GetMemberCertificate,
		GetClientCertificate: cm.GetClientCertificate,
		MinVersion:           tls.VersionTLS13,
		ClientAuth:           tls.RequireAnyClientCert,
		// the chain and the organization are checked in VerifyConnection,
		// for the server's certificate as for the client's
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("member: no certificate")
			}
			return verifyMember(pool, cs.PeerCertificates[0])
		},
	}
}

// apiTLS is the API listener's config: clients may present a certificate
// of the cluster CA (members do); kubectl with a token presents none. It
// serves the operator's certificate, if any, to clients and the member
// certificate to members (certs.Manager.GetCertificate).
func apiTLS(pool *x509.CertPool, cm *certs.Manager) *tls.Config {
	return &tls.Config{GetCertificate: cm.GetCertificate, NextProtos: []string{"h2", "http/1.1"},
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
}

// peerClientTLS is the config of the requests this member sends others. It
// asks for certs.MemberServerName, so that a listener with an operator's
// serving certificate answers with its member certificate, and checks that
// certificate as Raft does (the chain and the organization): any member's
// certificate of the cluster CA, whichever address it was dialled at.
func peerClientTLS(pool *x509.CertPool, cm *certs.Manager) *tls.Config {
	return &tls.Config{ServerName: certs.MemberServerName, GetClientCertificate: cm.GetClientCertificate,
		InsecureSkipVerify: true, // verified in VerifyConnection
		VerifyConnection:   verifyPeerServer(pool)}
}

// verifyPeerServer checks that the server of a connection to another
// member presented a member certificate of the cluster CA.
func verifyPeerServer(pool *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("member: no certificate")
		}
		return verifyMember(pool, cs.PeerCertificates[0])
	}
}

// peerAuth accepts requests whose client certificate is a member's. The API
// listener (apiTLS) verified the certificate's chain against the cluster CA
// during the handshake, once per connection; verifying it again here cost an
// ECDSA verification on every read-index call.
func peerAuth(r *http.Request) error {
	cert := auth.VerifiedCert(r)
	if cert == nil {
		return errors.New("no client certificate of the cluster CA")
	}
	return memberOrgOf(cert)
}
