package api

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The system PriorityClasses kube-apiserver creates at startup (its
// scheduling post-start hook): critical add-ons and node agents run at
// these priorities.

// systemCriticalPriority is kube's SystemCriticalPriority (2e9).
const systemCriticalPriority = 2 * highestUserPriority

// systemPriorityClasses returns kube's system classes, as it creates them.
func systemPriorityClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: systemCriticalPriority + 1000,
			Description: "Used for system critical pods that must not be moved from their current node."},
		{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: systemCriticalPriority,
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
	}
}

// knownSystemPriorityClass checks that pc is one of the system classes,
// same value and globalDefault (kube's IsKnownSystemPriorityClass).
func knownSystemPriorityClass(pc *schedulingv1.PriorityClass) error {
	for _, spc := range systemPriorityClasses() {
		if spc.Name != pc.Name {
			continue
		}
		if spc.Value != pc.Value {
			return fmt.Errorf("value of %v PriorityClass must be %v", spc.Name, spc.Value)
		}
		if spc.GlobalDefault != pc.GlobalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", spc.Name, spc.GlobalDefault)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", pc.Name)
}

// EnsureSystemPriorityClasses creates the system PriorityClasses that do
// not exist. Leader only.
func (s *Server) EnsureSystemPriorityClasses(ctx context.Context) error {
	res := s.registry().lookup("scheduling.k8s.io/v1", "priorityclasses")
	for _, pc := range systemPriorityClasses() {
		if err := s.ensure(ctx, &request{res: res, name: pc.Name}, pc); err != nil {
			return err
		}
	}
	return nil
}
