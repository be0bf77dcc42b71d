package registry

import (
	coordinationv1 "k8s.io/api/coordination/v1"
)

// coordinationKinds are the served kinds of coordination.k8s.io/v1.
func coordinationKinds() []*Resource {
	return []*Resource{
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Singular: "lease", Kind: "Lease",
			Namespaced: true, New: NewOf[coordinationv1.Lease](), NewList: NewOf[coordinationv1.LeaseList]()},
	}
}
