package workload

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// EnqueueSelecting calls enqueue with each of owners whose label selector
// (selector(owner), valid and not empty) matches lbls: the owners that
// may adopt an orphan carrying those labels.
func EnqueueSelecting[T any](owners []T, selector func(T) *metav1.LabelSelector, lbls map[string]string, enqueue func(obj any)) {
	for _, o := range owners {
		sel, err := metav1.LabelSelectorAsSelector(selector(o))
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(lbls)) {
			enqueue(o)
		}
	}
}
