package api

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/auth"
)

// BenchmarkAdmitWriterConfigMap is the user admission of a ConfigMap
// create by a user outside system:masters: what every write of a kind
// other than the four RBAC kinds pays for the escalation check (a type
// switch).
func BenchmarkAdmitWriterConfigMap(b *testing.B) {
	res := registry.New(registry.Builtin()).Lookup("v1", "configmaps")
	if res == nil {
		b.Fatal("configmaps not registered")
	}
	s := &Server{}
	q := &request{res: res, namespace: "bench"}
	u := &auth.User{Name: "alice", Groups: []string{"devs", auth.GroupAuthenticated}}
	ctx := auth.WithUser(b.Context(), u)
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "bench"}, Data: map[string]string{"k": "v"}}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.admitWriter(ctx, q, obj, nil); err != nil {
			b.Fatal(err)
		}
	}
}
