// Package controllers runs litek8s's leader-only controllers: the garbage
// collector (this package: ownerReferences with background, foreground and
// orphan propagation, as kube-controller-manager's
// "generic-garbage-collector" does it) and the typed controllers, one
// package each, wired by the wire_*.go files:
//
//   - workloads: deployment, replicaset, job, statefulset (shared work loop,
//     expectations and adoption in workload/);
//   - scheduling: the scheduler ("default-scheduler"), the simulated nodes
//     (simnode: Nodes, their Leases and the pods bound to them, like KWOK),
//     node lifecycle, taint eviction (tainteviction: pods on NoExecute
//     taints) and the pod GC (podgc: pods of nodes that are gone);
//   - cluster: namespace, endpoint and endpointslice, pvc-/pv-protection,
//     serviceaccount (the "default" ServiceAccount of every namespace),
//     root-ca-cert-publisher (kube-root-ca.crt in every namespace),
//     clusterrole-aggregation (the rules of aggregated ClusterRoles) and
//     kubernetes-service (default/kubernetes and its endpoints: the
//     members' API addresses, from Options.Members);
//   - certificates: csrapproving (kubelet client CSRs) and csrsigning
//     (approved CSRs signed with the cluster CA), in csr/.
//
// The typed controllers share one term's kit.Context: client-go
// SharedIndexInformers over the local change feed, in-process clientsets and
// an event writer. Config.Disabled turns controllers off by name. The
// foundation:
//
//   - Manager (manager.go) runs the controllers only while this member
//     leads: Run hands them to Leadership.RunAsLeader, which starts them
//     after the new leader's Barrier and cancels them, and waits for them,
//     when leadership is lost. Each term starts from nothing (fresh
//     informers, graph and queues), so a new leader finishes what an old
//     one left half done.
//   - Reads never go through HTTP: the garbage collector's informers
//     (informer.go) list each resource of the LOCAL store, then follow
//     one watch of the change feed over every resource, from the oldest
//     list's revision (one goroutine and one watcher, not one per
//     resource); a watch that ends with kv.ErrExpired (it fell behind the
//     feed window) relists and counts a resync (Stats.Resyncs).
//     Controllers decode only the fields they need (gjson on metadata for
//     the garbage collector). What the garbage collector keeps costs next
//     to nothing per object it does not act on: the
//     informer's view is the store's own copy-on-write list plus what
//     changed since, and the graph has nodes only for objects with owners,
//     being deleted, or owning one (gc_graph.go).
//   - Writes go through the same admission and Raft path as any client:
//     client-go's dynamic client on a RoundTripper that calls the member's
//     API handler in process (client.go: no network, no TLS), with the
//     admin token. The handler is api.Server.LocalOnly: a write made when
//     this member no longer leads fails (503) instead of being relayed to
//     the new leader, which fences the old term's work. Deletions carry a
//     uid precondition and patches a resourceVersion, so a stale decision
//     never deletes or rewrites an object that replaced the one decided on.
//   - Work queues are client-go's TypedRateLimitingQueue: one entry per
//     object (deduplicated), failures retried with per-item exponential
//     backoff. They are built with kit.NewQueue or kit.NewLoop, which give
//     them the member's workqueue metrics (kit.QueueMetrics: one set of
//     vectors per member, built once, never client-go's global provider);
//     metrics.go adds the leading gauge, the resync counters and the
//     scheduler's attempt series (docs/metrics.md).
//
// Client identity. kube-controller-manager's clients send the User-Agent
// "kube-controller-manager/<version> (<os>/<arch>) kubernetes/<commit>/<controller>"
// and set no fieldManager: kube-apiserver takes the manager name from the
// User-Agent up to its first '/', so what the garbage collector writes
// appears in managedFields as "kube-controller-manager" (the golden
// captures under internal/member/testdata show that name; the controller's
// own name, "generic-garbage-collector", is only the User-Agent's suffix).
// litek8s does the same: Config.Manager (default "kube-controller-manager")
// and "litek8s/<controller>" make the User-Agent
// "kube-controller-manager/<version> (<os>/<arch>) litek8s/generic-garbage-collector",
// so that clients and tests that tell controller-written fields apart by
// that manager name (as the conformance tests do) see what they see on
// kube. Set Config.Manager to "litek8s-controller-manager" to tell them
// apart instead.
//
// Concurrency: a Manager is safe for concurrent use. Run is its one
// long-lived call; the goroutines of a term (one per informer, the
// controllers' workers and their queues) are owned by the term and have
// all returned when the term's run returns, before RunAsLeader starts a new
// term. Stats may be read at any time.
package controllers
