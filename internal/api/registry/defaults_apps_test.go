package registry

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An update keeps the stored template generation whatever the writer
// sent, and bumps it when the template changed (kube's daemonset
// strategy).
func TestPrepareDaemonSetUpdate(t *testing.T) {
	ds := func(gen, image string) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d"}}
		if gen != "" {
			d.Annotations = map[string]string{daemonSetTemplateGeneration: gen}
		}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: image}}
		return d
	}
	for _, c := range []struct {
		name           string
		sent, stored   string
		image          string
		wantGeneration string
	}{
		{"same template, annotation left out", "", "3", "a", "3"},
		{"same template, stale annotation", "1", "3", "a", "3"},
		{"template changed", "3", "3", "b", "4"},
		{"template changed, annotation left out", "", "3", "b", "4"},
		{"stored without one", "", "", "b", "2"},
	} {
		obj := ds(c.sent, c.image)
		prepareDaemonSetUpdate(obj, ds(c.stored, "a"))
		if got := obj.Annotations[daemonSetTemplateGeneration]; got != c.wantGeneration {
			t.Errorf("%s: template generation %q, want %q", c.name, got, c.wantGeneration)
		}
	}
}
