// Package podgc is the orphan part of kube's pod garbage collector
// (pkg/controller/podgc): a pod bound to a node that does not exist is
// deleted once the node has been missing for Config.Quarantine (kube: 40
// s), so that a node that is being registered, or that the term's informer
// has not seen yet, does not lose its pods. Every Config.CheckPeriod (kube:
// 20 s) the controller notes the nodes that bound pods name and the node
// informer lacks; once one has been missing for the quarantine, a live GET
// confirms it is gone (NotFound), and each of its pods is first marked
// Failed with the condition DisruptionTarget (reason DeletionByPodGC,
// "PodGC: node no longer exists") unless it already finished, then
// deleted with grace period 0 (a pod has no kubelet left to confirm it),
// as kube does. The pod's uid is a precondition: a pod recreated under the
// same name is left alone.
//
// Not done (kube's other passes): deleting terminated pods beyond a
// threshold, and terminating pods on NotReady nodes tainted
// node.kubernetes.io/out-of-service. The API deletes unbound pods at once,
// so kube's pass over unscheduled terminating pods has nothing to do.
//
// Ownership: none beyond the deletions above. Concurrency: Run is the
// controller's only goroutine; the missing-node clock is its own and
// starts afresh each term (a new leader gives every missing node a full
// quarantine).
package podgc
