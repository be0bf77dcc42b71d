package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/litek8s/litek8s/internal/kv"
)

// DefaultStorageClass admission (kube's plugin of that name): a new claim
// that names no class (storageClassName unset, and no beta
// volume.beta.kubernetes.io/storage-class annotation; "" is a choice, not
// unset) gets the default StorageClass, the one annotated
// storageclass.kubernetes.io/is-default-class=true (or the beta
// annotation); among several, the newest, as kube picks.

// storageClassesKey is where the store keeps StorageClasses.
const storageClassesKey = "storageclasses.storage.k8s.io"

// admitDefaultStorageClass sets the default class on a new claim.
func (s *Server) admitDefaultStorageClass(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Spec.StorageClassName != nil {
		return nil
	}
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return nil
	}
	l, err := s.store.List(ctx, storageClassesKey, "", false)
	if err != nil {
		return fmt.Errorf("unable to get default StorageClass: %w", err)
	}
	var best *storagev1.StorageClass
	var decodeErr error
	l.Range("", func(o *kv.Object) bool {
		a := gjson.GetBytes(o.Raw, "metadata.annotations")
		if a.Get(`storageclass\.kubernetes\.io/is-default-class`).Str != "true" &&
			a.Get(`storageclass\.beta\.kubernetes\.io/is-default-class`).Str != "true" {
			return true
		}
		sc := &storagev1.StorageClass{}
		if decodeErr = json.Unmarshal(o.Raw, sc); decodeErr != nil {
			return false
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			sc.CreationTimestamp.Equal(&best.CreationTimestamp) && sc.Name < best.Name {
			best = sc
		}
		return true
	})
	if decodeErr != nil {
		return decodeErr
	}
	if best != nil {
		name := best.Name
		pvc.Spec.StorageClassName = &name
	}
	return nil
}
