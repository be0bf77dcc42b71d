package member_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/api/admission"
	"github.com/litek8s/litek8s/internal/audit"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestValidatingAdmissionPolicy (issue 18, acceptance 2): kube's
// documented replicas limit on a 3-member cluster, through the leader and
// through a follower (which forwards the write): Deny refuses with kube's
// code, reason and message and stores nothing; Warn admits with kube's
// warning; deleting the binding lifts the policy.
func TestValidatingAdmissionPolicy(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	leader := c.WaitLeader()
	admin := c.Clientset(leader)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "vap", Labels: map[string]string{"environment": "test"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}},
		},
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := func(name string, action admissionregistrationv1.ValidationAction) {
		t.Helper()
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: pol.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{action},
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"environment": "test"}}}},
		}
		if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deploy := func(name string, replicas int32) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	}
	clients := map[string]int{"leader": leader, "follower": c.Follower()}

	bind("demo-binding-test.example.com", admissionregistrationv1.Deny)
	for via, i := range clients {
		cs, rec := recordingClient(t, c, i)
		_, err := cs.AppsV1().Deployments("vap").Create(ctx, deploy("big-"+via, 10), metav1.CreateOptions{})
		var se *apierrors.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("via %s: want kube's denial, got %v", via, err)
		}
		st := se.Status()
		want := `deployments.apps "big-` + via + `" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' ` +
			`with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5`
		if st.Code != 422 || st.Reason != metav1.StatusReasonInvalid || st.Message != want {
			t.Errorf("via %s: %d %s %q\nwant 422 Invalid %q", via, st.Code, st.Reason, st.Message, want)
		}
		if _, err := admin.AppsV1().Deployments("vap").Get(ctx, "big-"+via, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("via %s: a refused deployment: %v", via, err)
		}
		if _, err := cs.AppsV1().Deployments("vap").Create(ctx, deploy("small-"+via, 5), metav1.CreateOptions{}); err != nil {
			t.Errorf("via %s: 5 replicas: %v", via, err)
		}
		if w := rec.take(); len(w) != 0 {
			t.Errorf("via %s: warnings %q with Deny", via, w)
		}
	}

	// Warn instead of Deny: admitted, with kube's warning
	if err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "demo-binding-test.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	bind("demo-binding-warn.example.com", admissionregistrationv1.Warn)
	for via, i := range clients {
		cs, rec := recordingClient(t, c, i)
		if _, err := cs.AppsV1().Deployments("vap").Create(ctx, deploy("warned-"+via, 10), metav1.CreateOptions{}); err != nil {
			t.Fatalf("via %s: Warn refused: %v", via, err)
		}
		want := "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding " +
			"'demo-binding-warn.example.com': failed expression: object.spec.replicas <= 5"
		if w := rec.take(); len(w) != 1 || w[0] != want {
			t.Errorf("via %s: warnings %q, want [%q]", via, w, want)
		}
	}
	// a namespace the binding does not select is not checked
	if _, err := admin.AppsV1().Deployments("default").Create(ctx, deploy("elsewhere", 10), metav1.CreateOptions{}); err != nil {
		t.Errorf("namespace without the label: %v", err)
	}
	c.SameObjects(ctx, "/apis/apps/v1/deployments", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings")
}

// recordingClient is a clientset of member i that records the warnings
// of the answers.
func recordingClient(t *testing.T, c *membertest.Cluster, i int) (*kubernetes.Clientset, *warningRecorder) {
	t.Helper()
	cfg := c.RESTConfig(i)
	cfg.WrapTransport = membertest.RetryUnavailable
	rec := &warningRecorder{}
	cfg.WarningHandler = rec
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, rec
}

// TestValidatingAdmissionPolicyAudit: validationActions Audit and a
// policy's auditAnnotations (kube's documented example) land on the
// write's audit event as kube words them; the write is admitted.
func TestValidatingAdmissionPolicyAudit(t *testing.T) {
	// The plumbing's attributes record the plugins' annotations
	// (admission.AuditAnnotations); without that nothing below could pass.
	probe := admission.NewAttributes(admission.Request{Operation: kadmission.Create})
	if err := probe.AddAnnotation("probe.litek8s.io/k", "v"); err != nil || admission.AuditAnnotations(probe, "Metadata")["probe.litek8s.io/k"] != "v" {
		t.Fatal("the admission plumbing does not pass plugins' audit annotations to the audit event")
	}
	dir := t.TempDir()
	pf := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pf, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := membertest.StartCluster(t, 1, membertest.FastRaft, func(cfg *member.Config) {
		cfg.Audit = audit.Config{PolicyFile: pf, Path: filepath.Join(cfg.DataDir, "audit.log")}
	})
	ctx := t.Context()
	cs := c.Clientset(0)
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "high-replica-count",
				ValueExpression: "'Deployment spec.replicas set to ' + string(object.spec.replicas)"}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "demo-binding-audit"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: pol.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}}}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "big"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(60)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Audit refused: %v", err)
	}
	want := map[string]string{
		"validation.policy.admission.k8s.io/validation_failure": `[{"message":"failed expression: object.spec.replicas \u003c= 5","policy":"demo-policy.example.com","binding":"demo-binding-audit","expressionIndex":0,"validationActions":["Audit"]}]`,
		"demo-policy.example.com/high-replica-count":            "Deployment spec.replicas set to 60",
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		for _, ev := range readAuditLog(t, c.Config(0).Audit.Path) {
			if ev.Verb != "create" || ev.ObjectRef == nil || ev.ObjectRef.Resource != "deployments" || ev.ObjectRef.Name != "big" {
				continue
			}
			for k, v := range want {
				if ev.Annotations[k] != v && ev.Annotations[k] != strings.ReplaceAll(v, `\u003c`, "<") {
					return fmt.Errorf("annotation %s = %q, want %q (all: %v)", k, ev.Annotations[k], v, ev.Annotations)
				}
			}
			return nil
		}
		return errors.New("no audit event for the create")
	})
}
