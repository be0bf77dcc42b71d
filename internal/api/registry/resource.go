package registry

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// resourceKinds are the served kinds of resource.k8s.io/v1 (dynamic
// resource allocation), as kube 1.37 serves them by default. The kubelet
// deletes its node's ResourceSlices at start (deletecollection with a
// spec.nodeName field selector); nothing in litek8s allocates claims.
func resourceKinds() []*Resource {
	const g = "resource.k8s.io"
	return []*Resource{
		{Group: g, Version: "v1", Resource: "deviceclasses", Singular: "deviceclass", Kind: "DeviceClass",
			HasGeneration: true, New: NewOf[resourcev1.DeviceClass](), NewList: NewOf[resourcev1.DeviceClassList]()},
		{Group: g, Version: "v1", Resource: "devicetaintrules", Singular: "devicetaintrule", Kind: "DeviceTaintRule",
			HasGeneration: true, Status: true,
			New: NewOf[resourcev1.DeviceTaintRule](), NewList: NewOf[resourcev1.DeviceTaintRuleList](),
			Normalize: defaultDeviceTaintRule, Prepare: prepareDeviceTaintRule, Validate: validateDeviceTaintRule},
		{Group: g, Version: "v1", Resource: "resourceclaims", Singular: "resourceclaim", Kind: "ResourceClaim",
			Namespaced: true, Status: true,
			New: NewOf[resourcev1.ResourceClaim](), NewList: NewOf[resourcev1.ResourceClaimList](),
			Normalize: defaultResourceClaim, Prepare: prepareResourceClaim, Validate: validateResourceClaim},
		{Group: g, Version: "v1", Resource: "resourceclaimtemplates", Singular: "resourceclaimtemplate",
			Kind: "ResourceClaimTemplate", Namespaced: true,
			New: NewOf[resourcev1.ResourceClaimTemplate](), NewList: NewOf[resourcev1.ResourceClaimTemplateList](),
			Normalize: defaultResourceClaimTemplate, Validate: validateResourceClaimTemplate},
		{Group: g, Version: "v1", Resource: "resourceslices", Singular: "resourceslice", Kind: "ResourceSlice",
			HasGeneration: true, New: NewOf[resourcev1.ResourceSlice](), NewList: NewOf[resourcev1.ResourceSliceList](),
			Normalize: defaultResourceSlice, Validate: validateResourceSlice},
	}
}
