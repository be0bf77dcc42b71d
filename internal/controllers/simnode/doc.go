// Package simnode runs simulated nodes, as KWOK does: with Config.Count N
// > 0 it registers the Nodes sim-node-0 … sim-node-<N-1> (Ready, with the
// configured capacity, an InternalIP, a /24 pod CIDR and Config.Taints
// each, as a kubelet's --register-with-taints: a node that already exists
// keeps the taints it has), renews each node's Lease in kube-node-lease
// every Config.LeaseInterval, and plays the kubelet for the pods bound to
// them:
//
//   - a bound pod becomes Running and Ready, with a pod IP from its node's
//     /24 (unique on the node), the node's hostIP, a startTime and running
//     container statuses;
//   - a pod owned by a Job (an ownerReference of kind Job, or the label
//     batch.kubernetes.io/job-name) Succeeds Config.JobPodDuration after
//     it started: containers terminated with exit code 0, Ready False;
//   - a pod being deleted (deletionTimestamp set) is deleted at once with
//     grace period 0, as a kubelet does once its containers stopped
//     (simulated containers stop at once). Nothing else finishes a graceful
//     deletion: the API keeps a pod Terminating until its kubelet does.
//
// Simulated nodes run on the leader and move with it: a new leader's
// simnode adopts the nodes that exist (it never recreates them), renews
// their leases, sets Ready True again if the node lifecycle controller
// marked them Unknown meanwhile, and leaves the statuses of running pods
// as they are (their IPs stay reserved).
//
// Ownership: simnode owns the Nodes named <NamePrefix><i> for i < Count,
// their Leases, and the status of the pods bound to them. Sim nodes beyond
// Count (a member configured with fewer) are left alone, and go Unknown.
//
// Concurrency: informer handlers only enqueue. Config.Workers goroutines
// serve a queue of pod keys; two goroutines serve a queue of node names
// (registration, status and lease renewal, each node re-queued after
// LeaseInterval). The IP allocator has its own mutex. Run returns once all
// of them have returned.
package simnode
