package datadir

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/litek8s/litek8s/internal/auth"
)

// Secrets is what every member of a cluster shares: the cluster CA (each
// member issues its own certificate with it), the key that signs
// ServiceAccount tokens, and the hashes of the admin token and of the
// cluster's first join token: members verify those tokens, they need not
// hold them. A joining member receives the Secrets from the cluster with a
// join token.
type Secrets struct {
	CACert []byte `json:"caCert"` // PEM
	CAKey  []byte `json:"caKey"`  // PEM
	// AdminTokenHash is auth.HashToken of the admin token; empty: no admin
	// token (clients use certificates, as the kubeconfigs members write).
	AdminTokenHash string `json:"adminTokenHash,omitempty"`
	// JoinTokenHash is auth.HashToken of the join token the cluster was
	// bootstrapped with; it joins until revoked (see package jointoken).
	JoinTokenHash string `json:"joinTokenHash,omitempty"`
	// SAKey signs ServiceAccount tokens (PEM EC key; tls/sa.key). Data
	// dirs from before it sign with the CA key.
	SAKey []byte `json:"saKey,omitempty"`

	// JoinToken is the plain join token, known only to the member that
	// bootstrapped the cluster (tls/join-token, for its operator); it is
	// never sent to joiners.
	JoinToken string `json:"-"`
	// Token and LegacyJoinToken are what members before the hashes sent
	// joiners; read only to hash them.
	Token           string `json:"token,omitempty"`
	LegacyJoinToken string `json:"joinToken,omitempty"`
}

// ServiceAccountIssuer is the iss (and default audience) of the
// ServiceAccount tokens, kube's default.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceAccountKey is the key that signs ServiceAccount tokens.
func (s Secrets) ServiceAccountKey() (*ecdsa.PrivateKey, error) {
	b := s.SAKey
	if len(b) == 0 {
		b = s.CAKey
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("member: the ServiceAccount key is not PEM")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

// MemberOrg is the organization of member certificates: what tells a
// member apart from any other holder of a certificate of the cluster CA.
const MemberOrg = "litek8s:members"

// ClusterID names the cluster: a digest of its CA certificate, which every
// member of it has and no other cluster shares.
func (s Secrets) ClusterID() string {
	block, _ := pem.Decode(s.CACert)
	if block == nil {
		return ""
	}
	sum := sha256.Sum256(block.Bytes)
	return hex.EncodeToString(sum[:8])
}

// TLSDir is where dataDir keeps the secrets.
func TLSDir(dataDir string) string { return filepath.Join(dataDir, "tls") }

// Files under TLSDir.
const (
	fileAdminToken     = "admin-token" // plain: data dirs from before the hashes
	fileAdminTokenHash = "admin-token.sha256"
	fileJoinToken      = "join-token" // plain: on the member that bootstrapped
	fileJoinTokenHash  = "join-token.sha256"
)

// LoadSecrets reads the shared secrets from dataDir; ok is false when the
// member has none yet. A data dir from before the hashes (a plain
// tls/admin-token) is converted: the hash is written and the plain admin
// token removed.
func LoadSecrets(dataDir string) (s Secrets, ok bool, err error) {
	dir := TLSDir(dataDir)
	if s.CACert, err = os.ReadFile(filepath.Join(dir, "ca.crt")); errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	} else if err != nil {
		return s, false, err
	}
	if s.CAKey, err = os.ReadFile(filepath.Join(dir, "ca.key")); err != nil {
		return s, false, err
	}
	if s.SAKey, err = os.ReadFile(filepath.Join(dir, "sa.key")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, false, err
	}
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return string(b), err
	}
	var plainAdmin string
	for _, f := range []struct {
		name string
		to   *string
	}{{fileAdminTokenHash, &s.AdminTokenHash}, {fileAdminToken, &plainAdmin},
		{fileJoinTokenHash, &s.JoinTokenHash}, {fileJoinToken, &s.JoinToken}} {
		if *f.to, err = read(f.name); err != nil {
			return s, false, err
		}
	}
	join := s.JoinToken
	if join == "" {
		join = plainAdmin // a data dir from before join tokens: the admin token joins
	}
	if s.JoinTokenHash == "" && join != "" {
		s.JoinTokenHash = auth.HashToken(join)
		if err := writeSecretFile(dir, fileJoinTokenHash, []byte(s.JoinTokenHash)); err != nil {
			return s, false, err
		}
	}
	if plainAdmin != "" {
		if s.AdminTokenHash == "" {
			s.AdminTokenHash = auth.HashToken(plainAdmin)
			if err := writeSecretFile(dir, fileAdminTokenHash, []byte(s.AdminTokenHash)); err != nil {
				return s, false, err
			}
		}
		if err := os.Remove(filepath.Join(dir, fileAdminToken)); err != nil {
			return s, false, err
		}
	}
	return s, true, nil
}

func writeSecretFile(dir, name string, b []byte) error {
	return os.WriteFile(filepath.Join(dir, name), b, 0o600)
}

// Save writes the secrets under dataDir (TLSDir), readable by the owner
// only: the plain join token only when this member knows it.
func (s Secrets) Save(dataDir string) error {
	dir := TLSDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, b := range map[string][]byte{"ca.crt": s.CACert, "ca.key": s.CAKey,
		fileAdminTokenHash: []byte(s.AdminTokenHash), fileJoinTokenHash: []byte(s.JoinTokenHash),
		fileJoinToken: []byte(s.JoinToken), "sa.key": s.SAKey} {
		if len(b) == 0 {
			continue
		}
		if err := writeSecretFile(dir, name, b); err != nil {
			return err
		}
	}
	return nil
}

// Marshal is the JSON a joining member receives (the join secrets): no
// plain token.
func (s Secrets) Marshal() ([]byte, error) {
	s.JoinToken, s.Token, s.LegacyJoinToken = "", "", ""
	return json.Marshal(s)
}

// Unmarshal reads join secrets (Marshal's), hashing the plain tokens
// members before the hashes sent.
func Unmarshal(b []byte) (Secrets, error) {
	var s Secrets
	if err := json.Unmarshal(b, &s); err != nil {
		return s, err
	}
	if s.AdminTokenHash == "" && s.Token != "" {
		s.AdminTokenHash = auth.HashToken(s.Token)
	}
	if s.JoinTokenHash == "" && s.LegacyJoinToken != "" {
		s.JoinTokenHash = auth.HashToken(s.LegacyJoinToken)
	}
	s.Token, s.LegacyJoinToken = "", ""
	return s, nil
}

// NewSecrets creates a cluster's secrets: a cluster CA unless given, the
// hash of the admin token when one is given (none otherwise), and the join
// token (a random one unless given), whose plain text this member keeps.
func NewSecrets(adminToken, joinToken string, caCert, caKey []byte) (Secrets, error) {
	if len(caCert) == 0 {
		var err error
		if caCert, caKey, err = NewCA(); err != nil {
			return Secrets{}, err
		}
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Secrets{}, err
	}
	sab, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return Secrets{}, err
	}
	if joinToken == "" {
		joinToken = randomToken()
	}
	s := Secrets{
		CACert:        caCert,
		CAKey:         caKey,
		JoinToken:     joinToken,
		JoinTokenHash: auth.HashToken(joinToken),
		SAKey:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sab}),
	}
	if adminToken != "" {
		s.AdminTokenHash = auth.HashToken(adminToken)
	}
	return s, nil
}

// NewCA makes a new cluster CA (PEM certificate and EC key).
func NewCA() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: Serial(), Subject: pkix.Name{CommonName: "litek8s-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}

// CheckCA reports why a given CA cannot be the cluster's: the key must
// match the certificate, and the certificate must be a CA that may sign
// certificates and is valid now.
func CheckCA(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("member: the given CA: %w", err)
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("member: the given CA certificate: %w", err)
	}
	now := time.Now()
	switch {
	case !c.IsCA || c.KeyUsage&x509.KeyUsageCertSign == 0:
		return fmt.Errorf("member: the given CA certificate %q is not a CA that may sign certificates", c.Subject.CommonName)
	case now.Before(c.NotBefore) || now.After(c.NotAfter):
		return fmt.Errorf("member: the given CA certificate %q is valid from %s to %s only", c.Subject.CommonName,
			c.NotBefore.Format(time.RFC3339), c.NotAfter.Format(time.RFC3339))
	}
	return nil
}

func randomToken() string {
	tok := make([]byte, 24)
	rand.Read(tok)
	return hex.EncodeToString(tok)
}

// MemberCert issues this member's certificate, signed by the cluster CA:
// it serves the API and Raft (for the given IPs and DNS names) and
// authenticates the member to the others (organization MemberOrg).
func (s Secrets) MemberCert(id string, ips []net.IP, names []string) (tls.Certificate, error) {
	ca, err := tls.X509KeyPair(s.CACert, s.CAKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("member: cluster CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: Serial(), Subject: pkix.Name{CommonName: id, Organization: []string{MemberOrg}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: ips, DNSNames: names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// CAPool holds the cluster CA certificate.
func (s Secrets) CAPool() (*x509.CertPool, error) {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(s.CACert) {
		return nil, errors.New("member: bad cluster CA certificate")
	}
	return p, nil
}

// Serial is a random certificate serial number (120 bits).
func Serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}
