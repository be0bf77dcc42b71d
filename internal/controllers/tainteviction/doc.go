// Package tainteviction is kube's taint eviction controller
// (pkg/controller/tainteviction, "taint-eviction-controller"): it deletes
// the pods bound to a node with NoExecute taints they do not tolerate.
//
//   - A pod that does not tolerate one of its node's NoExecute taints is
//     deleted at once.
//   - A pod that tolerates all of them, some for tolerationSeconds, is
//     deleted when the shortest of those ends (0 or less: at once),
//     counted from when the taint was added (its timeAdded; the node
//     lifecycle controller sets it) or, for a pod bound later, from when
//     it was bound (its PodScheduled condition): kube counts from when its
//     controller first sees the pod on the tainted node, which is the
//     later of the two. A taint with no timeAdded counts from when this
//     term first saw it.
//   - A pod that tolerates them all forever (no tolerationSeconds) stays.
//
// Deleting a pod, as kube 1.37 does: an Event TaintManagerEviction
// ("Marking for deletion Pod <ns>/<name>") on the pod, the condition
// DisruptionTarget True (reason DeletionByTaintManager, "Taint manager:
// deleting due to NoExecute taint") in its status, then a DELETE with the
// pod's own grace period (uid precondition). The pod is then Terminating
// until its kubelet finishes it (a node that went unreachable never does:
// its workload controllers already replaced it, as in kube). A taint
// removed before its deadline cancels the deletion: the due pod is looked
// at again and nothing is done; kube's "Cancelling deletion" event is not
// written.
//
// Ownership: the DisruptionTarget condition it sets and the deletions
// above. Concurrency: informer handlers only enqueue pod keys;
// Config.Workers goroutines serve the queue (a pod not yet due is
// re-queued for its deadline); the first-seen clock of taints without
// timeAdded is guarded by mu. Run returns once all of them have returned.
package tainteviction
