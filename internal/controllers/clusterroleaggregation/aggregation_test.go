package clusterroleaggregation_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The default aggregated roles hold their rules once the leader's
// controller ran; a ClusterRole labelled aggregate-to-view shows up in
// view, and through view's own aggregate-to-edit label in edit, then in
// admin; deleted, it leaves all three. Run on 3 members, read and written
// through a follower.
func TestAggregatedRules(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	cs := c.Clientset(c.Follower())
	ctx := t.Context()
	namespaces := rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"namespaces"}}
	for _, name := range []string{"view", "edit", "admin"} {
		membertest.Eventually(t, 10*time.Second, func() error { return hasRule(t, cs, name, namespaces, true) })
	}
	// edit aggregates view's rules (view is labelled aggregate-to-edit)
	// and its own; admin all of edit's: the rules kube's bootstrap roles
	// end up with.
	view, err := cs.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range view.Rules {
		if slices.ContainsFunc(view.Rules[:i], func(o rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(o, r) }) {
			t.Errorf("view repeats rule %v", r)
		}
	}
	widgets := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "widget-viewer",
		Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules: []rbacv1.PolicyRule{widgets}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"view", "edit", "admin"} {
		membertest.Eventually(t, 10*time.Second, func() error { return hasRule(t, cs, name, widgets, true) })
	}
	if err := cs.RbacV1().ClusterRoles().Delete(ctx, "widget-viewer", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"view", "edit", "admin"} {
		membertest.Eventually(t, 10*time.Second, func() error { return hasRule(t, cs, name, widgets, false) })
	}
}

// hasRule reports (as an error) whether ClusterRole name's stored rules
// hold r or not, as want says.
func hasRule(t *testing.T, cs kubernetes.Interface, name string, r rbacv1.PolicyRule, want bool) error {
	cr, err := cs.RbacV1().ClusterRoles().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	got := slices.ContainsFunc(cr.Rules, func(o rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(o, r) })
	if got != want {
		return fmt.Errorf("clusterrole %s holds %v: %v, want %v (%d rules)", name, r, got, want, len(cr.Rules))
	}
	return nil
}
