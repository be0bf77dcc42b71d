package registry

import (
	storagev1 "k8s.io/api/storage/v1"
)

// storageKinds are the served kinds of storage.k8s.io/v1. The CSI kinds
// are written by the kubelet (CSINode), CSI drivers and the attach/detach
// controller; nothing in litek8s acts on them.
func storageKinds() []*Resource {
	const g = "storage.k8s.io"
	return []*Resource{
		{Group: g, Version: "v1", Resource: "storageclasses", Singular: "storageclass",
			Kind: "StorageClass", ShortNames: []string{"sc"},
			New: NewOf[storagev1.StorageClass](), NewList: NewOf[storagev1.StorageClassList](),
			Normalize: defaultStorageClass, Validate: validateStorageClass},
		{Group: g, Version: "v1", Resource: "csidrivers", Singular: "csidriver", Kind: "CSIDriver",
			New: NewOf[storagev1.CSIDriver](), NewList: NewOf[storagev1.CSIDriverList](),
			Normalize: defaultCSIDriver, Validate: validateCSIDriver},
		{Group: g, Version: "v1", Resource: "csinodes", Singular: "csinode", Kind: "CSINode", Status: true,
			New: NewOf[storagev1.CSINode](), NewList: NewOf[storagev1.CSINodeList](),
			Prepare: prepareCSINode, Validate: validateCSINode},
		{Group: g, Version: "v1", Resource: "csistoragecapacities", Singular: "csistoragecapacity",
			Kind: "CSIStorageCapacity", Namespaced: true,
			New: NewOf[storagev1.CSIStorageCapacity](), NewList: NewOf[storagev1.CSIStorageCapacityList](),
			Validate: validateCSIStorageCapacity},
		{Group: g, Version: "v1", Resource: "volumeattachments", Singular: "volumeattachment",
			Kind: "VolumeAttachment", Status: true,
			New: NewOf[storagev1.VolumeAttachment](), NewList: NewOf[storagev1.VolumeAttachmentList](),
			Normalize: defaultVolumeAttachment, Prepare: prepareVolumeAttachment, Validate: validateVolumeAttachment},
		{Group: g, Version: "v1", Resource: "volumeattributesclasses", Singular: "volumeattributesclass",
			Kind: "VolumeAttributesClass", ShortNames: []string{"vac"},
			New: NewOf[storagev1.VolumeAttributesClass](), NewList: NewOf[storagev1.VolumeAttributesClassList](),
			Validate: validateVolumeAttributesClass},
	}
}
