package serviceaccount_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Every namespace gets its "default" ServiceAccount, the ones the members
// create and a new one; a deleted one comes back; a namespace being deleted gets
// none back. Run on 3 members, through a follower.
func TestDefaultServiceAccount(t *testing.T) {
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) {
		cfg.Controllers.Cluster.Namespace.DeletionDelay = 100 * time.Millisecond
	})
	rc := c.RESTConfig(c.Follower())
	rc.WrapTransport = membertest.RetryUnavailable
	cs := kubernetes.NewForConfigOrDie(rc)
	ctx := t.Context()

	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		waitAccount(t, cs, ns)
	}
	for _, ns := range []string{"apps", "doomed"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first := waitAccount(t, cs, "apps")
	// Only a name: kube records no managedFields entry for an empty field set.
	if m := first.ObjectMeta; len(m.Labels)+len(m.Annotations)+len(m.ManagedFields)+len(first.Secrets) != 0 {
		t.Errorf("the default account %+v %+v, want nothing but its name", m, first.Secrets)
	}

	// Deleted, it comes back (another object).
	if err := cs.CoreV1().ServiceAccounts("apps").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		sa, err := cs.CoreV1().ServiceAccounts("apps").Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sa.UID == first.UID {
			return fmt.Errorf("still the deleted account %s", sa.UID)
		}
		return nil
	})

	// A namespace being deleted, held by an object with a finalizer: the
	// namespace controller deletes its account, which stays deleted.
	waitAccount(t, cs, "doomed")
	if _, err := cs.CoreV1().ConfigMaps("doomed").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // let the namespace go, so the members stop clean
		cs.CoreV1().ConfigMaps("doomed").Patch(context.Background(), "held", types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := cs.CoreV1().Namespaces().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	getDoomed := func() error {
		_, err := cs.CoreV1().ServiceAccounts("doomed").Get(ctx, "default", metav1.GetOptions{})
		return err
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		if err := getDoomed(); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the account of a namespace being deleted: %v, want NotFound", err)
		}
		return nil
	})
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := getDoomed(); !apierrors.IsNotFound(err) {
			t.Fatalf("the account of a namespace being deleted came back: %v", err)
		}
	}
	c.SameObjects(ctx, "/api/v1/serviceaccounts")
}

// waitAccount waits for the "default" ServiceAccount of ns and returns it.
func waitAccount(t *testing.T, cs kubernetes.Interface, ns string) *corev1.ServiceAccount {
	t.Helper()
	var sa *corev1.ServiceAccount
	membertest.Eventually(t, 10*time.Second, func() error {
		var err error
		sa, err = cs.CoreV1().ServiceAccounts(ns).Get(t.Context(), "default", metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
		return nil
	})
	return sa
}
