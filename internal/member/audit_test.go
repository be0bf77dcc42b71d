package member_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/litek8s/litek8s/internal/audit"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// auditPolicy: nothing for the group "quiet" nor the health probes, whole
// bodies for ConfigMaps, metadata for the rest; no RequestReceived.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  userGroups: [quiet]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
`

// auditTokens: alice may edit in "audited", bob may not read Secrets,
// carol is in the group the policy does not audit.
const auditTokens = "alice-token,alice,u-alice,editors\nbob-token,bob,u-bob\ncarol-token,carol,u-carol,quiet\n"

// TestAuditThroughFollower (issue 17, acceptance 4): a kubectl session
// through a follower is audited on that follower, once, with the real
// users, the answers' codes and the bodies the policy asks for; the
// leader, which applied the relayed writes, records none of them, and
// records what it received itself.
func TestAuditThroughFollower(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl not on PATH")
	}
	dir := t.TempDir()
	pf, tf := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "tokens.csv")
	for name, body := range map[string]string{pf: auditPolicy, tf: auditTokens} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) {
		cfg.TokenAuthFile = tf
		cfg.Audit = audit.Config{PolicyFile: pf, Path: filepath.Join(cfg.DataDir, "audit.log")}
	})
	leader, f := c.WaitLeader(), c.Follower()
	logOf := func(i int) string { return c.Config(i).Audit.Path }
	ctx := t.Context()
	cs := c.Clientset(leader)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "editors"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "editors"}}}
	if _, err := cs.RbacV1().RoleBindings("audited").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cache := filepath.Join(dir, "cache")
	// kubectl runs args on member: wantErr says whether it must fail (the
	// watch, ended by its timeout, may do either).
	kubectl := func(member int, wantErr bool, args ...string) string {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, "kubectl", append([]string{"--kubeconfig", c.Kubeconfig(member),
			"--cache-dir", cache, "-n", "audited"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if (err != nil) != wantErr && args[len(args)-1] != "--request-timeout=2s" {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	kubectl(f, false, "create", "configmap", "cm1", "--from-literal=k=v1")
	kubectl(f, false, "get", "configmap", "cm1", "-o", "json")
	kubectl(f, false, "get", "configmaps")
	kubectl(f, false, "patch", "configmap", "cm1", "-p", `{"data":{"k":"v2"}}`)
	kubectl(f, false, "--token", "alice-token", "create", "secret", "generic", "s1", "--from-literal=p=s3cr3t-value")
	if out := kubectl(f, true, "--token", "bob-token", "get", "secrets"); !strings.Contains(out, "Forbidden") {
		t.Fatalf("bob: %s", out)
	}
	kubectl(f, true, "--token", "carol-token", "get", "configmaps")
	kubectl(f, false, "delete", "configmap", "cm1", "--wait=false")
	kubectl(f, false, "get", "configmaps", "--watch-only", "--request-timeout=2s")

	admin := "litek8s-admin"
	type key struct {
		verb, resource, name, user, stage string
		code                              int32
	}
	want := []key{
		{"create", "configmaps", "cm1", admin, "ResponseComplete", 201},
		{"get", "configmaps", "cm1", admin, "ResponseComplete", 200},
		{"list", "configmaps", "", admin, "ResponseComplete", 200},
		{"patch", "configmaps", "cm1", admin, "ResponseComplete", 200},
		{"create", "secrets", "s1", "alice", "ResponseComplete", 201},
		{"list", "secrets", "", "bob", "ResponseComplete", 403},
		{"delete", "configmaps", "cm1", admin, "ResponseComplete", 200},
		{"watch", "configmaps", "", admin, "ResponseStarted", 200},
		{"watch", "configmaps", "", admin, "ResponseComplete", 200},
		// what kubectl sends besides: patch gets the object first, and
		// --watch-only lists for the resourceVersion to watch from
		{"get", "configmaps", "cm1", admin, "ResponseComplete", 200},
		{"list", "configmaps", "", admin, "ResponseComplete", 200},
	}
	session := func(ev auditv1.Event) bool {
		return strings.HasPrefix(ev.UserAgent, "kubectl/") && ev.ObjectRef != nil && ev.ObjectRef.Namespace == "audited"
	}
	var got map[key]auditv1.Event
	membertest.Eventually(t, 10*time.Second, func() error { // the watch's last event follows kubectl's exit
		var keys []key
		got = map[key]auditv1.Event{}
		for _, ev := range readAuditLog(t, logOf(f)) {
			if !session(ev) {
				continue
			}
			k := key{ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Name, ev.User.Username, string(ev.Stage), ev.ResponseStatus.Code}
			keys, got[k] = append(keys, k), ev
		}
		if !sameKeys(keys, want) {
			return fmt.Errorf("follower's events:\n%v\nwant:\n%v", keys, want)
		}
		return nil
	})

	// bodies where the policy says, and only there
	unknown := func(u interface{ MarshalJSON() ([]byte, error) }) string {
		b, _ := u.MarshalJSON()
		return string(b)
	}
	cr := got[want[0]]
	if cr.RequestObject == nil || !strings.Contains(unknown(cr.RequestObject), `"data":{"k":"v1"}`) ||
		cr.ResponseObject == nil || !strings.Contains(unknown(cr.ResponseObject), `"resourceVersion"`) {
		t.Errorf("create configmap: request and response objects: %+v", cr)
	}
	if p := got[want[3]]; p.RequestObject == nil || unknown(p.RequestObject) != `{"data":{"k":"v2"}}` ||
		p.ResponseObject == nil || !strings.Contains(unknown(p.ResponseObject), `"k":"v2"`) {
		t.Errorf("patch: %+v", p)
	}
	for _, k := range want[4:6] {
		if ev := got[k]; ev.Level != auditv1.LevelMetadata || ev.RequestObject != nil || ev.ResponseObject != nil {
			t.Errorf("%v: a Metadata event with bodies: %+v", k, ev)
		}
	}
	if ev := got[want[5]]; ev.ResponseStatus.Reason != metav1.StatusReasonForbidden ||
		!strings.Contains(ev.ResponseStatus.Message, `User "bob" cannot list resource "secrets"`) ||
		ev.Annotations["authorization.k8s.io/decision"] != "forbid" {
		t.Errorf("bob's refusal: %+v", ev)
	}
	if ev := got[want[4]]; ev.User.UID != "u-alice" || !slices.Contains(ev.User.Groups, "editors") ||
		ev.Annotations["authorization.k8s.io/decision"] != "allow" || len(ev.SourceIPs) == 0 {
		t.Errorf("alice's create (relayed to the leader): %+v", ev)
	}

	// The leader records none of the session, and does record what it
	// received itself.
	kubectl(leader, false, "create", "configmap", "on-leader", "--from-literal=k=v")
	membertest.Eventually(t, 10*time.Second, func() error {
		var keys []key
		for _, ev := range readAuditLog(t, logOf(leader)) {
			if session(ev) {
				keys = append(keys, key{ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Name, ev.User.Username, string(ev.Stage), ev.ResponseStatus.Code})
			}
		}
		if w := []key{{"create", "configmaps", "on-leader", admin, "ResponseComplete", 201}}; !sameKeys(keys, w) {
			return fmt.Errorf("leader's events: %v, want %v", keys, w)
		}
		return nil
	})
	for i := range c.N() {
		b, err := os.ReadFile(logOf(i))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("s3cr3t-value")) || bytes.Contains(b, []byte("czNjcjN0LXZhbHVl")) {
			t.Errorf("member %d: a Metadata-level Secret's value is in the audit log", i)
		}
		if bytes.Contains(b, []byte(`"user":{"username":"carol"`)) {
			t.Errorf("member %d: carol's requests are audited (policy: None)", i)
		}
		if bytes.Contains(b, []byte(`"stage":"RequestReceived"`)) {
			t.Errorf("member %d: RequestReceived is omitted by the policy", i)
		}
	}
}

// sameKeys compares as multisets.
func sameKeys[K comparable](got, want []K) bool {
	n := map[K]int{}
	for _, k := range got {
		n[k]++
	}
	for _, k := range want {
		n[k]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}

// readAuditLog returns the events of the audit log at path.
func readAuditLog(t *testing.T, path string) []auditv1.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The member may be writing an event while we read: a write that
	// crosses a page boundary becomes visible a page at a time, so the
	// last line is whole only once its newline is there, as for any
	// reader tailing a log.
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var evs []auditv1.Event
	for line := range bytes.Lines(b) {
		var ev auditv1.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}
