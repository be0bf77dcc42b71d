package registry

import (
	policyv1 "k8s.io/api/policy/v1"
)

// policyKinds are the served kinds of policy/v1.
func policyKinds() []*Resource {
	return []*Resource{
		{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Singular: "poddisruptionbudget",
			Kind: "PodDisruptionBudget", Namespaced: true, ShortNames: []string{"pdb"}, HasGeneration: true,
			New: NewOf[policyv1.PodDisruptionBudget](), NewList: NewOf[policyv1.PodDisruptionBudgetList](),
			Prepare: preparePodDisruptionBudget, Status: true, Validate: validatePodDisruptionBudget},
	}
}
