package api

import (
	policyv1 "k8s.io/api/policy/v1"
)

// policyKinds are the served kinds of policy/v1.
func policyKinds() []*resource {
	return []*resource{
		{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Singular: "poddisruptionbudget",
			Kind: "PodDisruptionBudget", Namespaced: true, ShortNames: []string{"pdb"}, HasGeneration: true,
			New: newOf[policyv1.PodDisruptionBudget](), NewList: newOf[policyv1.PodDisruptionBudgetList](),
			Prepare: preparePodDisruptionBudget, Status: true, Validate: validatePodDisruptionBudget},
	}
}
