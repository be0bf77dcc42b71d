package csr

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// SignerName is kube's name for the signer.
const SignerName = "csrsigning"

// backdate is how far before now a certificate starts (kube: 5 minutes,
// for clocks a little behind).
const backdate = 5 * time.Minute

// CA is the cluster CA the signer signs with.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// ParseCA reads a CA certificate and key (PEM).
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("csr: CA: %w", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("csr: CA: %w", err)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("csr: CA key cannot sign")
	}
	return &CA{Cert: cert, Key: key}, nil
}

// signer issues the certificates of approved CSRs.
type signer struct {
	cfg    Config
	ca     *CA
	now    func() time.Time
	client kubernetes.Interface
	csrs   certlisters.CertificateSigningRequestLister
	log    *slog.Logger
	loop   *kit.Loop
}

// NewSigner returns the signer of the term of kc; without a CA (nil) it
// signs nothing.
func NewSigner(kc *kit.Context, cfg Config, ca *CA, now func() time.Time) kit.Controller {
	inf := kc.Informers.CertificateSigningRequests()
	s := &signer{cfg: cfg, ca: ca, now: now, client: kc.Client(SignerName),
		csrs: certlisters.NewCertificateSigningRequestLister(inf.GetIndexer()), log: kc.Log.With("controller", SignerName)}
	s.loop = kit.NewLoop(kc, SignerName, cfg.LoopConfig, s.sync)
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: s.loop.Enqueue,
		UpdateFunc: func(_, obj any) { s.loop.Enqueue(obj) }})
	return s
}

func (s *signer) Name() string { return SignerName }

// Run works until ctx ends and returns once the workers have stopped.
func (s *signer) Run(ctx context.Context) {
	if s.ca == nil {
		s.log.Warn("no cluster CA: certificate signing requests are not signed")
		<-ctx.Done()
		s.loop.Queue.ShutDown()
		return
	}
	s.loop.Run(ctx)
}

// rules are the request checks of each signer this controller serves.
var rules = map[string]func(*x509.CertificateRequest, []certificatesv1.KeyUsage) string{
	signerClient:        clientError,
	signerKubeletClient: kubeletClientError,
	signerKubeletServe:  kubeletServingError,
}

// sync signs CSR name when it is approved, not failed nor signed, and
// one of our signers'; a request its signer's rules refuse is failed.
func (s *signer) sync(ctx context.Context, name string) error {
	csr, err := s.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	check, ours := rules[csr.Spec.SignerName]
	if !ours || len(csr.Status.Certificate) > 0 || !condition(csr, certificatesv1.CertificateApproved) ||
		condition(csr, certificatesv1.CertificateDenied) || condition(csr, certificatesv1.CertificateFailed) {
		return nil
	}
	csr = csr.DeepCopy()
	req, err := parseRequest(csr)
	why := ""
	switch {
	case err != nil:
		why = "unable to parse csr: " + err.Error()
	case req.CheckSignature() != nil:
		why = "the request's signature does not check"
	default:
		why = check(req, csr.Spec.Usages)
	}
	if why != "" {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerValidationFailure", Message: why})
		s.log.Info("failed", "csr", name, "signer", csr.Spec.SignerName, "reason", why)
	} else {
		der, err := s.issue(req, csr)
		if err != nil {
			return err
		}
		csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	_, err = s.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if err == nil && why == "" {
		s.log.Info("signed", "csr", name, "signer", csr.Spec.SignerName, "subject", req.Subject.String())
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// issue signs req with the CA for the CSR's usages and duration.
func (s *signer) issue(req *x509.CertificateRequest, csr *certificatesv1.CertificateSigningRequest) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	d := s.cfg.Duration
	if e := csr.Spec.ExpirationSeconds; e != nil && time.Duration(*e)*time.Second < d {
		d = time.Duration(*e) * time.Second
	}
	now := s.now()
	notAfter := now.Add(d)
	if notAfter.After(s.ca.Cert.NotAfter) {
		notAfter = s.ca.Cert.NotAfter
	}
	ku, eku := keyUsages(csr.Spec.Usages)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: req.Subject, DNSNames: req.DNSNames,
		IPAddresses: req.IPAddresses, EmailAddresses: req.EmailAddresses, URIs: req.URIs,
		NotBefore: now.Add(-backdate), NotAfter: notAfter, KeyUsage: ku, ExtKeyUsage: eku, BasicConstraintsValid: true}
	return x509.CreateCertificate(rand.Reader, tmpl, s.ca.Cert, req.PublicKey, s.ca.Key)
}

// keyUsages maps a CSR's usages to x509's.
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage) {
	var ku x509.KeyUsage
	var eku []x509.ExtKeyUsage
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature:
			ku |= x509.KeyUsageDigitalSignature
		case certificatesv1.UsageContentCommitment:
			ku |= x509.KeyUsageContentCommitment
		case certificatesv1.UsageKeyEncipherment:
			ku |= x509.KeyUsageKeyEncipherment
		case certificatesv1.UsageKeyAgreement:
			ku |= x509.KeyUsageKeyAgreement
		case certificatesv1.UsageDataEncipherment:
			ku |= x509.KeyUsageDataEncipherment
		case certificatesv1.UsageClientAuth:
			eku = append(eku, x509.ExtKeyUsageClientAuth)
		case certificatesv1.UsageServerAuth:
			eku = append(eku, x509.ExtKeyUsageServerAuth)
		}
	}
	return ku, eku
}
