package rootca_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/internal/controllers/rootca"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Every namespace gets kube-root-ca.crt holding the CA of the admin
// kubeconfig, as kube writes it; a deleted one comes back, a changed one
// is set right; a namespace being deleted gets none back. Run on 3
// members, through a follower.
func TestRootCAPublished(t *testing.T) {
	c := membertest.StartCluster(t, 3, func(cfg *member.Config) {
		cfg.Controllers.Cluster.Namespace.DeletionDelay = 100 * time.Millisecond
	})
	rc := c.RESTConfig(c.Follower())
	rc.WrapTransport = membertest.RetryUnavailable
	cs := kubernetes.NewForConfigOrDie(rc)
	ctx := t.Context()
	kc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig(0))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ca.crt": string(kc.CAData)}
	published := func(ns string) func() error {
		return func() error {
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			switch {
			case err != nil:
				return fmt.Errorf("namespace %s: %w", ns, err)
			case !maps.Equal(cm.Data, want) || cm.Annotations["kubernetes.io/description"] != rootca.Description:
				return fmt.Errorf("namespace %s: data %v, annotations %v", ns, cm.Data, cm.Annotations)
			}
			return nil
		}
	}

	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		membertest.Eventually(t, 10*time.Second, published(ns))
	}
	for _, ns := range []string{"apps", "doomed"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	membertest.Eventually(t, 10*time.Second, published("apps"))
	first, err := cs.CoreV1().ConfigMaps("apps").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// As in the golden captures: the description annotation only, the
	// manager kube-controller-manager.
	if mf := first.ManagedFields; len(first.Labels) != 0 || len(first.Annotations) != 1 || len(mf) != 1 ||
		mf[0].Manager != "kube-controller-manager" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate ||
		string(mf[0].FieldsV1.Raw) != `{"f:data":{".":{},"f:ca.crt":{}},"f:metadata":{"f:annotations":{".":{},"f:kubernetes.io/description":{}}}}` {
		t.Errorf("kube-root-ca.crt metadata %+v", first.ObjectMeta)
	}

	// Deleted, it comes back (another object).
	if err := cs.CoreV1().ConfigMaps("apps").Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		cm, err := cs.CoreV1().ConfigMaps("apps").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err == nil && cm.UID == first.UID {
			return fmt.Errorf("still the deleted ConfigMap %s", cm.UID)
		}
		return err
	})
	membertest.Eventually(t, 10*time.Second, published("apps"))

	// Changed, it is set right: data replaced (an extra key goes), the
	// description back.
	for _, patch := range []string{`{"data":{"ca.crt":"not a CA","extra":"x"}}`,
		`{"metadata":{"annotations":{"kubernetes.io/description":null}}}`} {
		if _, err := cs.CoreV1().ConfigMaps("apps").Patch(ctx, "kube-root-ca.crt", types.MergePatchType, []byte(patch),
			metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		membertest.Eventually(t, 10*time.Second, published("apps"))
	}

	// A namespace being deleted, held by an object with a finalizer: the
	// namespace controller deletes kube-root-ca.crt, which stays deleted.
	membertest.Eventually(t, 10*time.Second, published("doomed"))
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
		_, err := cs.CoreV1().ConfigMaps("doomed").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		if err := getDoomed(); !apierrors.IsNotFound(err) {
			return fmt.Errorf("kube-root-ca.crt of a namespace being deleted: %v, want NotFound", err)
		}
		return nil
	})
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := getDoomed(); !apierrors.IsNotFound(err) {
			t.Fatalf("kube-root-ca.crt of a namespace being deleted came back: %v", err)
		}
	}
	c.SameObjects(ctx, "/api/v1/configmaps")
}
