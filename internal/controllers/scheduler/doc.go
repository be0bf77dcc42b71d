// Package scheduler is litek8s's default-scheduler: it binds pending Pods
// (spec.nodeName empty, spec.schedulerName "default-scheduler" or empty) to
// Nodes by POSTing pods/binding, as kube-scheduler does, with a small
// subset of its plugins:
//
//   - Filters, in kube's order, the first failing one rejecting the node:
//     NodeUnschedulable (spec.unschedulable unless the pod tolerates the
//     node.kubernetes.io/unschedulable:NoSchedule taint), TaintToleration
//     (NoSchedule and NoExecute taints), the node's Ready condition (kube
//     relies on the not-ready/unreachable taints of the node lifecycle
//     controller; litek8s also refuses a node that is not Ready yet and
//     has no such taint, unless the pod tolerates it), NodeAffinity
//     (nodeSelector and required node affinity) and NodeResourcesFit (cpu,
//     memory, ephemeral-storage, extended resources and the pod count
//     against status.allocatable minus the requests of the pods bound to
//     the node, terminal pods excluded).
//   - Scores: least allocated (cpu and memory, kube's non-zero defaults for
//     pods without requests) plus, with weight 2, spreading the pods of one
//     controller owner across nodes (topology key kubernetes.io/hostname).
//     Ties go to the first node by name, so decisions are deterministic.
//   - Volumes (volumes.go, kube's VolumeBinding and VolumeZone): a pod
//     whose claim is missing or unbound with Immediate binding fits
//     nowhere ("pod has unbound immediate PersistentVolumeClaims"); a
//     bound claim's volume node affinity and zone labels must match the
//     node; for unbound WaitForFirstConsumer claims the scheduler writes
//     the chosen node on the claims (volume.kubernetes.io/selected-node)
//     and binds the pod once they are bound. Pods without claims pay one
//     loop over their volumes.
//   - A pod that fits nowhere gets PodScheduled=False reason Unschedulable
//     with kube's message ("0/3 nodes are available: 1 Insufficient cpu, 2
//     node(s) didn't match Pod's node affinity/selector.") and a
//     FailedScheduling event; it waits until a node is added or changes, or
//     an assigned pod goes away, and is then retried with per-pod
//     exponential backoff (and at the latest every Config.FlushInterval).
//
// The decision (decide in decide.go) is a plain function over nodeInfos,
// table-tested without a cluster.
//
// Ownership: the scheduler owns spec.nodeName (through pods/binding), the
// PodScheduled=False condition of the pods it schedules and the
// selected-node annotation of WaitForFirstConsumer claims; it reads Pods,
// Nodes, claims, volumes and StorageClasses through the term's shared
// informers and never modifies their objects.
//
// Concurrency: informer handlers update the cache (cache.go) under its
// mutex and add work to a client-go rate-limited queue. One scheduling
// goroutine takes pods from the queue, decides under the cache mutex and
// "assumes" the pod on the chosen node (its requests count at once, before
// the binding's update comes back through the informer), then hands the
// binding to Config.Binders goroutines, so several binds are in flight.
// A failed bind forgets the assumption and retries the pod with backoff.
// Run returns once every goroutine it started has returned.
package scheduler
