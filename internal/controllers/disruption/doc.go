// Package disruption is kube's disruption controller: it computes the
// status of every PodDisruptionBudget, which the API's eviction
// subresource spends (internal/api/eviction.go).
//
// For a budget it finds the pods of its namespace its selector matches
// and computes, as kube does:
//
//   - expectedPods: the sum of the replicas of the pods' controllers
//     (ReplicationController, Deployment through its ReplicaSet,
//     ReplicaSet, StatefulSet: their spec.replicas) when the budget says
//     maxUnavailable or a percentage minAvailable; the number of pods for
//     an integer minAvailable. Pods without a controller are left out
//     (an UnmanagedPods event); a controller of another kind fails the
//     sync ("found no controllers for pod").
//   - desiredHealthy: minAvailable (a percentage of expectedPods rounded
//     up), or expectedPods minus maxUnavailable (rounded up), at least 0.
//   - currentHealthy: the Ready pods that are not being deleted and not
//     recorded in status.disruptedPods within the last two minutes.
//   - disruptionsAllowed: currentHealthy - desiredHealthy, 0 when
//     negative or when expectedPods is 0.
//   - status.disruptedPods keeps the evictions (written by the API) whose
//     pod still exists, is not being deleted and was evicted less than
//     kube's DeletionTimeout (2 minutes) ago; the budget is synced again
//     when the earliest one expires.
//   - observedGeneration, and the DisruptionAllowed condition
//     (SufficientPods / InsufficientPods); a failed sync sets
//     disruptionsAllowed to 0 with reason SyncFailed and is retried.
//
// It also resets the DisruptionTarget condition of pods an eviction
// marked but that were not deleted within two minutes (stale.go).
//
// Concurrency: informer handlers only enqueue budget keys; Config.Workers
// goroutines sync them, one budget at a time each. Status writes carry
// the cached resourceVersion: a budget an eviction changed meanwhile
// conflicts and is synced again. Run returns once its workers returned.
package disruption
