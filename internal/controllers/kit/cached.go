package kit

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
)

// Cached is the preamble of a sync: it splits key (namespace/name) and
// reads its object from an informer's cache with get (a lister's Get).
// ok is false when there is nothing to sync: the key is malformed, the
// object is gone (then gone, if not nil, is called first: the controller
// forgets what it expected of it), or the cache failed (err). The object
// is the cache's: DeepCopy it before changing it.
func Cached[T any](key string, get func(namespace, name string) (T, error), gone func()) (obj T, ok bool, err error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return obj, false, nil
	}
	obj, err = get(ns, name)
	if apierrors.IsNotFound(err) {
		if gone != nil {
			gone()
		}
		return obj, false, nil
	}
	if err != nil {
		return obj, false, err
	}
	return obj, true, nil
}
