package member_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// The member tests run on membertest's cluster (with membertest.FastRaft);
// what they need of the member's internals is in export_test.go.

// rootCAName is the ConfigMap the root CA publisher puts in every
// namespace.
const rootCAName = "kube-root-ca.crt"

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// snapshotOf lists every ConfigMap of member i as name@resourceVersion=data,
// but the root CA publisher's kube-root-ca.crt, which every namespace gets
// at the controller's pace, as in kube, and the cluster's own
// kube-system/extension-apiserver-authentication (published at bootstrap).
func snapshotOf(ctx context.Context, c *membertest.Cluster, i int) ([]string, error) {
	l, err := c.PlainClientset(i).CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, cm := range l.Items {
		if cm.Name == rootCAName || cm.Namespace == metav1.NamespaceSystem && cm.Name == "extension-apiserver-authentication" {
			continue
		}
		out = append(out, fmt.Sprintf("%s/%s@%s=%v uid=%s", cm.Namespace, cm.Name, cm.ResourceVersion, cm.Data, cm.UID))
	}
	sort.Strings(out)
	return out, nil
}

// sameObjects checks that every running member holds the same ConfigMaps
// (with their data), and returns them.
func sameObjects(t testing.TB, c *membertest.Cluster, ctx context.Context) []string {
	t.Helper()
	var ref []string
	membertest.Eventually(t, 10*time.Second, func() error {
		ref = nil
		for i := range c.N() {
			if c.Member(i) == nil {
				continue
			}
			got, err := snapshotOf(ctx, c, i)
			if err != nil {
				return err
			}
			if ref == nil {
				ref = got
			} else if strings.Join(got, "\n") != strings.Join(ref, "\n") {
				return fmt.Errorf("member %d differs:\n%v\nvs\n%v", i, got, ref)
			}
		}
		return nil
	})
	return ref
}
