package workload

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEnqueueSelecting(t *testing.T) {
	rs := func(name string, sel *metav1.LabelSelector) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.ReplicaSetSpec{Selector: sel}}
	}
	owners := []*appsv1.ReplicaSet{
		rs("match", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}),
		rs("other", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}}),
		rs("empty", &metav1.LabelSelector{}), // selects everything: never an adopter
		rs("nil", nil),
		rs("invalid", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}),
		rs("expr", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}),
	}
	var got []string
	EnqueueSelecting(owners, func(r *appsv1.ReplicaSet) *metav1.LabelSelector { return r.Spec.Selector },
		map[string]string{"app": "a", "tier": "web"}, func(obj any) { got = append(got, obj.(*appsv1.ReplicaSet).Name) })
	if want := []string{"match", "expr"}; !slices.Equal(got, want) {
		t.Errorf("enqueued %v, want %v", got, want)
	}
}
