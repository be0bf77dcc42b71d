package api

import (
	storagev1 "k8s.io/api/storage/v1"
)

// storageKinds are the served kinds of storage.k8s.io/v1.
func storageKinds() []*resource {
	return []*resource{
		{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses", Singular: "storageclass",
			Kind: "StorageClass", ShortNames: []string{"sc"},
			New: newOf[storagev1.StorageClass](), NewList: newOf[storagev1.StorageClassList](),
			Normalize: defaultStorageClass, Validate: validateStorageClass},
	}
}
