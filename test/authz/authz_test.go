// Package authz is issue 8's acceptance 1: who may do what, on a real
// 3-member cluster, with real credentials of every kind.
package authz

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

const ns = "team"

// identity is who sends a request: a bearer token, a client certificate,
// or nothing.
type identity struct {
	name  string
	token string
	cert  *tls.Certificate
}

// TestIdentitiesAndRequests sends every request as every identity through
// the leader and through a follower (which relays writes with the user)
// and checks allowed / 403 / 401, and the wording of a 403.
func TestIdentitiesAndRequests(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	leader := c.WaitLeader()
	follower := c.Follower()
	cs := c.Clientset(leader)
	ctx := t.Context()

	mustCreate := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol-configmaps"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmaps"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{})
	mustCreate(err)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "reader", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	mustCreate(err)
	if exp := time.Until(tr.Status.ExpirationTimestamp.Time); exp < 50*time.Minute || exp > time.Hour {
		t.Errorf("token expires in %v, want an hour", exp)
	}

	dataDir := filepath.Dir(c.Kubeconfig(leader))
	carol := clientCert(t, dataDir, "carol", "devs")
	for i := range c.N() { // a follower is ready once the leader answered its first lag report
		membertest.Eventually(t, 10*time.Second, func() error {
			if code, b := do(t, httpClient(t, dataDir, nil), c.URL(i)+"/readyz", "GET", "", ""); code != http.StatusOK {
				return fmt.Errorf("member %d: /readyz %d %s", i, code, b)
			}
			return nil
		})
	}
	ids := []identity{
		{name: "admin", token: c.RESTConfig(0).BearerToken},
		{name: "sa-view", token: tr.Status.Token},
		{name: "cert-carol", cert: &carol},
		{name: "anonymous"},
		{name: "wrong-token", token: "not-a-token"},
	}

	type req struct {
		name, method, path, body string
	}
	cm := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
	}
	reqs := []req{
		{"list configmaps", "GET", "/api/v1/namespaces/team/configmaps", ""},
		{"get configmap", "GET", "/api/v1/namespaces/team/configmaps/c1", ""},
		{"create configmap", "POST", "/api/v1/namespaces/team/configmaps", cm("new-%s")},
		{"delete configmap", "DELETE", "/api/v1/namespaces/team/configmaps/new-%s", ""},
		{"list secrets", "GET", "/api/v1/namespaces/team/secrets", ""},
		{"list configmaps elsewhere", "GET", "/api/v1/namespaces/elsewhere/configmaps", ""},
		{"list deployments", "GET", "/apis/apps/v1/namespaces/team/deployments", ""},
		{"get node", "GET", "/api/v1/nodes/n1", ""},
		{"create namespace", "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns-%s"}}`},
		{"create rolebinding", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb-%s"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"},"subjects":[{"kind":"User","name":"x"}]}`},
		{"request a token", "POST", "/api/v1/namespaces/team/serviceaccounts/reader/token", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`},
		{"discovery", "GET", "/apis/apps/v1", ""},
		{"readyz", "GET", "/readyz", ""},
		{"version", "GET", "/version", ""},
		{"metrics", "GET", "/metrics", ""},
		{"self access review", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"team","verb":"list","resource":"configmaps"}}}`},
	}
	// want[request][identity]: 2xx, 403 or 401 (404 for a get of a node
	// nobody made: allowed, and not there).
	want := map[string][5]int{
		//                           admin sa   carol anon wrong
		"list configmaps":           {200, 200, 200, 403, 401},
		"get configmap":             {200, 200, 200, 403, 401},
		"create configmap":          {201, 403, 201, 403, 401},
		"delete configmap":          {200, 403, 200, 403, 401},
		"list secrets":              {200, 403, 403, 403, 401},
		"list configmaps elsewhere": {200, 403, 403, 403, 401},
		"list deployments":          {200, 200, 403, 403, 401},
		"get node":                  {404, 403, 403, 403, 401},
		"create namespace":          {201, 403, 403, 403, 401},
		"create rolebinding":        {201, 403, 403, 403, 401},
		"request a token":           {201, 403, 403, 403, 401},
		"discovery":                 {200, 200, 200, 403, 401},
		"readyz":                    {200, 200, 200, 200, 401},
		"version":                   {200, 200, 200, 200, 401},
		"metrics":                   {200, 403, 403, 403, 401},
		"self access review":        {201, 201, 201, 403, 401},
	}
	checked := 0
	for _, via := range []int{leader, follower} {
		role := map[bool]string{true: "leader", false: "follower"}[via == leader]
		for i, id := range ids {
			client := httpClient(t, dataDir, id.cert)
			for _, rq := range reqs {
				suffix := fmt.Sprintf("%s-%s", id.name, role)
				path, body := rq.path, rq.body
				if strings.Contains(path, "%s") {
					path = fmt.Sprintf(path, suffix)
				}
				if strings.Contains(body, "%s") {
					body = fmt.Sprintf(body, suffix)
				}
				code, resp := do(t, client, c.URL(via)+path, rq.method, body, id.token)
				if w := want[rq.name][i]; code != w {
					t.Errorf("%s %s via the %s: HTTP %d, want %d: %s", id.name, rq.name, role, code, w, resp)
					continue
				}
				checked++
				if code == http.StatusForbidden {
					var st metav1.Status
					if err := json.Unmarshal(resp, &st); err != nil || st.Reason != metav1.StatusReasonForbidden ||
						!strings.Contains(st.Message, "forbidden: User ") {
						t.Errorf("%s %s: 403 body %s", id.name, rq.name, resp)
					}
				}
			}
		}
	}
	t.Logf("checked %d (identity, request, member) answers", checked)

	// The wording, as kube-apiserver's (golden errors/403-*).
	code, resp := do(t, httpClient(t, dataDir, nil), c.URL(follower)+"/api/v1/namespaces/elsewhere/configmaps", "GET", "", tr.Status.Token)
	wantBody := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden: User \"system:serviceaccount:team:reader\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"elsewhere\"","reason":"Forbidden","details":{"kind":"configmaps"},"code":403}`
	if code != 403 || strings.TrimSpace(string(resp)) != wantBody {
		t.Errorf("403 body:\n got %s\nwant %s", resp, wantBody)
	}
}

// clientCert issues a client certificate of the cluster CA (the one in
// dataDir/tls) for user cn in groups orgs.
func clientCert(t *testing.T, dataDir, cn string, orgs ...string) tls.Certificate {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(filepath.Join(dataDir, "tls", "ca.crt"), filepath.Join(dataDir, "tls", "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cert, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func httpClient(t *testing.T, dataDir string, cert *tls.Certificate) *http.Client {
	t.Helper()
	pemCA, err := os.ReadFile(filepath.Join(dataDir, "tls", "ca.crt"))
	if dataDir == "" {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemCA)
	tc := &tls.Config{RootCAs: pool}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	tr := &http.Transport{TLSClientConfig: tc}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func do(t *testing.T, c *http.Client, url, method, body, token string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	r, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestCanIListAsServiceAccount: `kubectl auth can-i --list` as a
// ServiceAccount bound to view in one namespace lists what view grants
// there, and every verb it lists for a resource is one `kubectl auth
// can-i` allows (and one it does not list is refused).
func TestCanIListAsServiceAccount(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("no kubectl on PATH")
	}
	c := membertest.StartCluster(t, 1)
	cs := c.Clientset(0)
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", c.Kubeconfig(0)}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	tok, err := kubectl("-n", ns, "create", "token", "reader")
	if err != nil {
		t.Fatalf("kubectl create token: %v: %s", err, tok)
	}
	tok = strings.TrimSpace(tok)
	asSA := func(args ...string) (string, error) { return kubectl(append([]string{"--token", tok}, args...)...) }

	list, err := asSA("auth", "can-i", "--list", "-n", ns, "--no-headers")
	if err != nil {
		t.Fatalf("can-i --list: %v: %s", err, list)
	}
	granted := map[string]string{} // resource → verbs column
	var urls []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(line)
		if strings.HasPrefix(line, " ") || strings.HasPrefix(f[0], "[/") {
			urls = append(urls, f[0])
			continue
		}
		granted[f[0]] = strings.Join(f[len(f)-len(verbsOf(line)):], " ")
	}
	for res, verbs := range map[string]string{
		"configmaps": "[get list watch]", "pods": "[get list watch]", "pods/log": "[get list watch]",
		"deployments.apps": "[get list watch]", "jobs.batch": "[get list watch]",
		"selfsubjectaccessreviews.authorization.k8s.io": "[create]", "selfsubjectrulesreviews.authorization.k8s.io": "[create]",
	} {
		if granted[res] != verbs {
			t.Errorf("can-i --list: %s %q, want %s\n%s", res, granted[res], verbs, list)
		}
	}
	for _, res := range []string{"secrets", "roles.rbac.authorization.k8s.io", "*.*"} {
		if _, ok := granted[res]; ok {
			t.Errorf("can-i --list grants %s to a viewer:\n%s", res, list)
		}
	}
	if !strings.Contains(strings.Join(urls, " "), "[/api]") {
		t.Errorf("can-i --list has no discovery URLs: %v", urls)
	}
	// Every listed verb is allowed; writes and secrets are not.
	checked := 0
	for res, verbs := range granted {
		for _, v := range strings.Fields(strings.Trim(verbs, "[]")) {
			if strings.HasPrefix(res, "self") { // reviews are created, not read
				continue
			}
			out, _ := asSA("auth", "can-i", v, res, "-n", ns)
			if answer(out) != "yes" {
				t.Errorf("can-i %s %s: %q, though --list grants it", v, res, out)
			}
			checked++
		}
	}
	for _, q := range [][]string{{"create", "configmaps"}, {"get", "secrets"}, {"list", "configmaps", "-n", "default"}, {"delete", "pods"}} {
		args := append([]string{"auth", "can-i"}, q...)
		if len(q) == 2 {
			args = append(args, "-n", ns)
		}
		if out, _ := asSA(args...); answer(out) != "no" {
			t.Errorf("can-i %v: %q, want no", q, out)
		}
	}
	t.Logf("can-i --list as the ServiceAccount: %d resources; %d (verb, resource) pairs confirmed by can-i", len(granted), checked)
}

// answer is can-i's yes or no: its last line (kubectl may warn before it,
// e.g. that namespaces are not namespaced).
func answer(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// verbsOf returns the verbs column ("[get list watch]") of a can-i --list
// line, as fields.
func verbsOf(line string) []string {
	i := strings.LastIndex(line, "[")
	if i < 0 {
		return nil
	}
	return strings.Fields(line[i:])
}
