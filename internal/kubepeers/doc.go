// Package kubepeers is what a member running as a Pod of a StatefulSet
// learns about its peers from the Kubernetes API it runs in (in-cluster
// credentials; not litek8s's own API):
//
//   - Dialer reaches a peer's stable name, <pod>.<headless Service
//     domain>, at its Pod's status.podIP. DNS would answer too, but a
//     name looked up before its Pod has an IP is cached as missing
//     (CoreDNS caches negative answers for up to 30 s), which held a new
//     cluster's bootstrap for that long. A name outside the domain, or
//     any name when the API cannot be asked (no RBAC), goes through DNS.
//   - Pruner, run by the leader, removes from Raft the members whose
//     StatefulSet ordinal no longer exists (the StatefulSet was scaled
//     down), as Consul's and Vault's autopilot remove dead servers, so a
//     scale-down leaves no dead voter behind.
//
// Concurrency: Dialer is safe for concurrent use; Pruner.Run owns its loop
// and returns when its context ends.
package kubepeers
