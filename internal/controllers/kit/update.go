package kit

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OnUpdate returns an informer UpdateFunc that calls f with the old and
// the new object, both T (a k8s.io/api pointer type), when the object
// changed: a resync hands the same resourceVersion again, and is skipped.
func OnUpdate[T metav1.Object](f func(old, cur T)) func(old, cur any) {
	return func(old, cur any) {
		o, c := old.(T), cur.(T)
		if o.GetResourceVersion() == c.GetResourceVersion() {
			return
		}
		f(o, c)
	}
}
