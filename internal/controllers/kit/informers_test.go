package kit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestNamedInformer: an informer limited to one name lists and watches
// only the objects of that name, in every namespace.
func TestNamedInformer(t *testing.T) {
	c := membertest.StartCluster(t, 1)
	cs := c.Clientset(0)
	create := func(ns, name string) {
		t.Helper()
		_, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	create("default", "wanted")
	create("default", "other")
	ctx, end := context.WithCancel(t.Context())
	defer end()
	infs := kit.NewInformers(c.Member(0).Store(), new(atomic.Uint64))
	inf := infs.ConfigMapsNamed("wanted")
	if infs.ConfigMapsNamed("wanted") != inf || infs.ConfigMaps() == inf {
		t.Fatal("named informers are shared by name only")
	}
	infs.Start(ctx)
	defer infs.Wait()
	defer end()
	if !infs.WaitForSync(ctx) {
		t.Fatal("no sync")
	}
	create("kube-system", "wanted")
	create("kube-system", "other-2")
	membertest.Eventually(t, 10*time.Second, func() error {
		var keys []string
		for _, o := range inf.GetStore().List() {
			cm := o.(*corev1.ConfigMap)
			keys = append(keys, cm.Namespace+"/"+cm.Name)
		}
		if len(keys) != 2 || inf.GetStore().List() == nil {
			return fmt.Errorf("cached %v, want default/wanted and kube-system/wanted only", keys)
		}
		for _, k := range keys {
			if k != "default/wanted" && k != "kube-system/wanted" {
				return fmt.Errorf("cached %v, want default/wanted and kube-system/wanted only", keys)
			}
		}
		return nil
	})
}
