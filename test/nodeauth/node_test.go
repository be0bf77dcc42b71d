package nodeauth

import (
	"context"
	"crypto/x509"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// pod is a pod bound to node that mounts Secret secret and a
// ServiceAccount token.
func pod(name, node, secret string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "default", Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}},
				{Name: "api", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}}}
}

// TestNodeAuthorizer: a node reads the Secrets of its pods only, lists
// pods by spec.nodeName only, reads only its own Node; NodeRestriction
// keeps it off other nodes and other nodes' pods; access reviews answer
// the same.
func TestNodeAuthorizer(t *testing.T) {
	c := membertest.StartCluster(t, 1)
	admin := c.Clientset(0)
	ctx := t.Context()
	const ns = "work"
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	for _, s := range []string{"s1", "s2"} {
		must(admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s}}, metav1.CreateOptions{}))
	}
	for _, n := range []string{"n1", "n2"} {
		must(admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}))
	}
	must(admin.CoreV1().Pods(ns).Create(ctx, pod("p1", "n1", "s1"), metav1.CreateOptions{}))
	must(admin.CoreV1().Pods(ns).Create(ctx, pod("p2", "n2", "s2"), metav1.CreateOptions{}))

	n1 := clientFor(t, c, 0, withCert(issueCert(t, c, 0, "system:node:n1", "system:nodes")))
	if _, err := n1.CoreV1().Secrets(ns).Get(ctx, "s1", metav1.GetOptions{}); err != nil {
		t.Errorf("n1 gets its pod's secret: %v", err)
	}
	_, err := n1.CoreV1().Secrets(ns).Get(ctx, "s2", metav1.GetOptions{})
	const want = `secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "work": no relationship found between node 'n1' and this object`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("n1 gets another node's secret:\n got %v\nwant %s", err, want)
	}
	// the kubelet watches one secret with a metadata.name field selector
	if _, err := n1.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=s1"}); err != nil {
		t.Errorf("n1 lists its secret by name: %v", err)
	}
	if _, err := n1.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("n1 lists every secret: %v, want 403", err)
	}
	pods, err := n1.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "p1" {
		t.Errorf("n1 lists its pods: %v %v", err, pods)
	}
	if _, err := n1.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "can only list/watch pods with spec.nodeName field selector") {
		t.Errorf("n1 lists every pod: %v, want 403", err)
	}
	if _, err := n1.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("n1 reads n2: %v, want 403", err)
	}
	if _, err := n1.CoreV1().Services("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("n1 lists services (system:node rules): %v", err)
	}

	// NodeRestriction
	patch := []byte(`{"metadata":{"labels":{"x":"y"}}}`)
	_, err = n1.CoreV1().Nodes().Patch(ctx, "n2", types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `node "n1" is not allowed to modify node "n2"`) {
		t.Errorf("n1 patches n2: %v, want NodeRestriction's 403", err)
	}
	if _, err := n1.CoreV1().Nodes().Patch(ctx, "n1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Errorf("n1 labels itself: %v", err)
	}
	bad := []byte(`{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"gold"}}}`)
	if _, err := n1.CoreV1().Nodes().Patch(ctx, "n1", types.MergePatchType, bad, metav1.PatchOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "is not allowed to modify labels: node-restriction.kubernetes.io/pool") {
		t.Errorf("n1 sets a node-restriction label: %v, want 403", err)
	}
	status := []byte(`{"status":{"phase":"Running"}}`)
	if _, err := n1.CoreV1().Pods(ns).Patch(ctx, "p1", types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Errorf("n1 reports its pod's status: %v", err)
	}
	_, err = n1.CoreV1().Pods(ns).Patch(ctx, "p2", types.MergePatchType, status, metav1.PatchOptions{}, "status")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "can only update pod status for pods with spec.nodeName set to itself") {
		t.Errorf("n1 writes p2's status: %v, want 403", err)
	}
	if p, err := admin.CoreV1().Pods(ns).Get(ctx, "p2", metav1.GetOptions{}); err != nil || p.Status.Phase == corev1.PodRunning {
		t.Errorf("p2 after the refused write: %v %v", err, p.Status.Phase)
	}
	if err := n1.CoreV1().Pods(ns).Delete(ctx, "p2", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("n1 deletes p2: %v, want 403", err)
	}
	_, err = n1.CoreV1().Pods(ns).Create(ctx, pod("p3", "n1", "s1"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "can only create mirror pods") {
		t.Errorf("n1 creates a pod: %v, want 403", err)
	}

	// tokens for the pods' ServiceAccount, bound to a pod of its own only
	p1, err := admin.CoreV1().Pods(ns).Get(ctx, "p1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := admin.CoreV1().Pods(ns).Get(ctx, "p2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := func(p *corev1.Pod) error {
		tr := &authenticationv1.TokenRequest{}
		if p != nil {
			tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID}
		}
		_, err := n1.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", tr, metav1.CreateOptions{})
		return err
	}
	membertest.Eventually(t, 10*time.Second, func() error { return token(p1) }) // once the default ServiceAccount exists
	if err := token(p2); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "bound to a pod scheduled on a different node") {
		t.Errorf("n1 asks a token bound to p2: %v, want 403", err)
	}
	if err := token(nil); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "node requested token not bound to a pod") {
		t.Errorf("n1 asks an unbound token: %v, want 403", err)
	}

	// access reviews (the kubelet's webhook authorization asks these)
	sar := func(user string, groups []string, ra *authorizationv1.ResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
		t.Helper()
		out, err := n1.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: ra}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("n1 asks a SubjectAccessReview: %v", err)
		}
		return out.Status
	}
	nodes := []string{"system:nodes", "system:authenticated"}
	if st := sar("system:node:n1", nodes, &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets", Name: "s1"}); !st.Allowed {
		t.Errorf("review of n1 reading s1: %+v", st)
	}
	if st := sar("system:node:n1", nodes, &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "secrets", Name: "s2"}); st.Allowed ||
		st.Reason != "no relationship found between node 'n1' and this object" {
		t.Errorf("review of n1 reading s2: %+v", st)
	}
	if st := sar("bob", nil, &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: "n1"}); st.Allowed {
		t.Errorf("review of bob proxying to n1: %+v", st)
	}
}

// TestTokenReview: the kubelet's webhook authentication (as a node)
// reviews a ServiceAccount token, with and without audiences; a bad token
// is not authenticated.
func TestTokenReview(t *testing.T) {
	c := membertest.StartCluster(t, 1)
	admin := c.Clientset(0)
	ctx := t.Context()
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "app", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node := clientFor(t, c, 0, withCert(issueCert(t, c, 0, "system:node:n1", "system:nodes")))
	review := func(tok string, auds ...string) authenticationv1.TokenReviewStatus {
		t.Helper()
		out, err := node.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: tok, Audiences: auds}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("TokenReview: %v", err)
		}
		return out.Status
	}
	st := review(tr.Status.Token)
	if !st.Authenticated || st.User.Username != "system:serviceaccount:default:app" ||
		!slices.Contains(st.User.Groups, "system:serviceaccounts:default") || len(st.Audiences) == 0 {
		t.Errorf("review of the SA token: %+v", st)
	}
	if st := review(tr.Status.Token, st.Audiences[0]); !st.Authenticated || !slices.Equal(st.Audiences, st.Audiences[:1]) {
		t.Errorf("review for its audience: %+v", st)
	}
	if st := review(tr.Status.Token, "someone-else"); st.Authenticated {
		t.Errorf("review for another audience: %+v", st)
	}
	if st := review("not-a-token"); st.Authenticated || st.Error == "" {
		t.Errorf("review of a bad token: %+v", st)
	}
	// anonymous may not review tokens
	anon := clientFor(t, c, 0, func(*rest.Config) {})
	if _, err := anon.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("anonymous TokenReview: %v, want 403", err)
	}
}

// TestCertificateApprove: `kubectl certificate approve` of a node's
// kubelet-serving CSR (kube does not auto-approve those) gets it signed
// with its SANs; a user without the signer's approve permission is
// refused.
func TestCertificateApprove(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("no kubectl on PATH")
	}
	c := membertest.StartCluster(t, 1)
	ctx := t.Context()
	node := clientFor(t, c, 0, withCert(issueCert(t, c, 0, "system:node:n1", "system:nodes")))
	key, _ := newKey(t)
	req := csrPEM(t, key, "system:node:n1", []string{"system:nodes"}, []string{"n1.example"}, []net.IP{net.ParseIP("10.0.0.7")})
	csr, err := node.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "serving-n1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: "kubernetes.io/kubelet-serving",
			Usages: []certificatesv1.KeyUsage{"digital signature", "server auth"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// the node may not approve its own request
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Self"})
	_, err = node.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("node approves its own CSR: %v, want 403", err)
	}
	out, err := kubectl(ctx, c.Kubeconfig(0), "certificate", "approve", "serving-n1")
	if err != nil || !strings.Contains(out, "approved") {
		t.Fatalf("kubectl certificate approve: %v: %s", err, out)
	}
	csr = waitCertificate(t, c.Clientset(0), "serving-n1")
	cert := parseCert(t, csr.Status.Certificate)
	if cert.Subject.CommonName != "system:node:n1" || !slices.Equal(cert.DNSNames, []string{"n1.example"}) ||
		len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.ParseIP("10.0.0.7")) ||
		!slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		t.Errorf("serving certificate %v %v %v %v", cert.Subject, cert.DNSNames, cert.IPAddresses, cert.ExtKeyUsage)
	}
	if out, err := kubectl(ctx, c.Kubeconfig(0), "get", "csr", "serving-n1"); err != nil || !strings.Contains(out, "Approved,Issued") {
		t.Errorf("kubectl get csr: %v: %s", err, out)
	}
}

func kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}
