package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"

	"github.com/litek8s/litek8s/internal/member/datadir"
)

// maxBackdate is how far before its issue a certificate's NotBefore is put,
// for members whose clocks are behind: an hour, or a tenth of a short
// lifetime.
const maxBackdate = time.Hour

// issuer is the cluster CA.
type issuer struct {
	cert *x509.Certificate
	key  any
}

func newIssuer(certPEM, keyPEM []byte) (issuer, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return issuer{}, fmt.Errorf("%w cluster CA: %v", ErrInvalid, err)
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return issuer{}, fmt.Errorf("%w cluster CA: %v", ErrInvalid, err)
	}
	return issuer{cert: c, key: pair.PrivateKey}, nil
}

// issue makes a member certificate for id and its addresses, valid for
// validity from now.
func (ca issuer) issue(id string, ips []net.IP, names []string, validity time.Duration) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: datadir.Serial(), Subject: pkix.Name{CommonName: id, Organization: []string{datadir.MemberOrg}},
		NotBefore: now.Add(-min(maxBackdate, validity/10)), NotAfter: now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: ips, DNSNames: memberNames(names),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("certs: issue the member certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// memberNames is names with MemberServerName, once.
func memberNames(names []string) []string {
	out := slices.Clone(names)
	if !slices.Contains(out, MemberServerName) {
		out = append(out, MemberServerName)
	}
	return out
}

// renewAt is when a certificate is renewed: at 2/3 of its lifetime.
func renewAt(c *x509.Certificate) time.Time {
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}

// reusable reports whether a member certificate kept from an earlier start
// can serve now: issued by ca to id for exactly these addresses, and before
// its renewal time.
func (ca issuer) reusable(c *x509.Certificate, id string, ips []net.IP, names []string) bool {
	if c.Subject.CommonName != id || !slices.Contains(c.Subject.Organization, datadir.MemberOrg) ||
		c.CheckSignatureFrom(ca.cert) != nil || !time.Now().Before(renewAt(c)) {
		return false
	}
	want := memberNames(names)
	if !sameSet(c.DNSNames, want) || len(c.IPAddresses) != len(ips) {
		return false
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// serialHex is a serial number as openssl prints it.
func serialHex(n *big.Int) string { return fmt.Sprintf("%X", n) }
