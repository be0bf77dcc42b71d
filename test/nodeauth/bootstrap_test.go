// Package nodeauth checks node identity on a real member: TLS bootstrap
// with a bootstrap token, the Node authorizer, NodeRestriction, TokenReview
// and `kubectl certificate approve`.
package nodeauth

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// bind makes a ClusterRoleBinding of role to group (what kubeadm creates
// for TLS bootstrap; kube-apiserver does not).
func bind(t *testing.T, cs *kubernetes.Clientset, name, role, group string) {
	t.Helper()
	_, err := cs.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// bootstrapToken stores the Secret of bootstrap token id.secret.
func bootstrapToken(t *testing.T, cs *kubernetes.Clientset, id, secret string, expires time.Time) {
	t.Helper()
	_, err := cs.CoreV1().Secrets("kube-system").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id}, Type: "bootstrap.kubernetes.io/token",
		StringData: map[string]string{"token-id": id, "token-secret": secret, "usage-bootstrap-authentication": "true",
			"expiration": expires.UTC().Format(time.RFC3339)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// waitCertificate waits for CSR name to be issued and returns it.
func waitCertificate(t *testing.T, cs *kubernetes.Clientset, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	var csr *certificatesv1.CertificateSigningRequest
	membertest.Eventually(t, 20*time.Second, func() error {
		var err error
		if csr, err = cs.CertificatesV1().CertificateSigningRequests().Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if len(csr.Status.Certificate) == 0 {
			return fmt.Errorf("CSR %s not issued: conditions %+v", name, csr.Status.Conditions)
		}
		return nil
	})
	return csr
}

// parseCert decodes the first certificate of a PEM bundle.
func parseCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("no PEM in %q", b)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestTLSBootstrap: a bootstrap token authenticates as
// system:bootstrap:<id>; with kubeadm's bindings it creates a kubelet
// client CSR, which the approver approves (nodeclient) and the signer
// signs with the cluster CA; the certificate then authenticates as
// system:node:<name> and the Node authorizer lets it register its Node,
// and the node renews its certificate itself (selfnodeclient). The
// bootstrapper and the node talk to a follower, which relays their writes
// with their identity to the leader.
func TestTLSBootstrap(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	leader := c.WaitLeader()
	f := c.Follower()
	admin := c.Clientset(leader)
	ctx := t.Context()
	bind(t, admin, "kubeadm:kubelet-bootstrap", "system:node-bootstrapper", "system:bootstrappers")
	bind(t, admin, "kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", "system:bootstrappers")
	bind(t, admin, "kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes")
	bootstrapToken(t, admin, "abcdef", "0123456789abcdef", time.Now().Add(time.Hour))
	bootstrapToken(t, admin, "expire", "0123456789abcdef", time.Now().Add(-time.Minute))

	boot := clientFor(t, c, f, withToken("abcdef.0123456789abcdef"))
	who, err := boot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := who.Status.UserInfo; u.Username != "system:bootstrap:abcdef" || !slices.Contains(u.Groups, "system:bootstrappers") {
		t.Fatalf("bootstrap token is %+v, want system:bootstrap:abcdef in system:bootstrappers", u)
	}
	for _, tok := range []string{"expire.0123456789abcdef", "abcdef.0123456789abcdee"} {
		_, err := clientFor(t, c, f, withToken(tok)).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if !apierrors.IsUnauthorized(err) {
			t.Errorf("token %s: %v, want 401", tok, err)
		}
	}
	if _, err := boot.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bootstrapper lists secrets: %v, want 403", err)
	}

	key, keyPEM := newKey(t)
	req := csrPEM(t, key, "system:node:n1", []string{"system:nodes"}, nil, nil)
	csr, err := boot.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "node-csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: "kubernetes.io/kube-apiserver-client-kubelet",
			Usages: []certificatesv1.KeyUsage{"digital signature", "client auth"},
			// set by the server from the requester, whatever the client says
			Username: "system:admin", Groups: []string{"system:masters"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if csr.Spec.Username != "system:bootstrap:abcdef" || slices.Contains(csr.Spec.Groups, "system:masters") ||
		!slices.Contains(csr.Spec.Groups, "system:bootstrappers") {
		t.Fatalf("CSR requester %q %v, want the bootstrap token's", csr.Spec.Username, csr.Spec.Groups)
	}
	csr = waitCertificate(t, boot, csr.Name)
	if i := slices.IndexFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved
	}); i < 0 || csr.Status.Conditions[i].Reason != "AutoApproved" {
		t.Errorf("conditions %+v, want Approved by AutoApproved", csr.Status.Conditions)
	}
	cert := parseCert(t, csr.Status.Certificate)
	if cert.Subject.CommonName != "system:node:n1" || !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) ||
		!slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		t.Errorf("certificate %v usages %v", cert.Subject, cert.ExtKeyUsage)
	}

	node := clientFor(t, c, f, withCert(csr.Status.Certificate, keyPEM))
	who, err = node.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if who.Status.UserInfo.Username != "system:node:n1" || !slices.Contains(who.Status.UserInfo.Groups, "system:nodes") {
		t.Fatalf("signed certificate is %+v", who.Status.UserInfo)
	}
	if _, err := node.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("node registers itself: %v", err)
	}
	if _, err := node.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
		t.Fatalf("node reads itself: %v", err)
	}

	// renewal: the node asks for a new certificate as itself
	key2, _ := newKey(t)
	renew, err := node.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "renew-n1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, key2, "system:node:n1", []string{"system:nodes"}, nil, nil),
			SignerName: "kubernetes.io/kube-apiserver-client-kubelet", Usages: []certificatesv1.KeyUsage{"digital signature", "client auth"}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	renew = waitCertificate(t, node, renew.Name)
	if !strings.Contains(fmt.Sprint(renew.Status.Conditions), "self kubelet client") {
		t.Errorf("renewal conditions %+v, want the selfnodeclient approval", renew.Status.Conditions)
	}
	// a node asks for another node's certificate: NodeRestriction refuses
	_, err = node.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "steal-n2"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, key2, "system:node:n2", []string{"system:nodes"}, nil, nil),
			SignerName: "kubernetes.io/kube-apiserver-client-kubelet", Usages: []certificatesv1.KeyUsage{"digital signature", "client auth"}}},
		metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "can only create a node CSR with CN=system:node:n1") {
		t.Errorf("CSR for another node: %v, want 403", err)
	}
	c.SameObjects(ctx, "/apis/certificates.k8s.io/v1/certificatesigningrequests", "/api/v1/nodes")
}
