// Package clusterroleaggregation is litek8s's ClusterRole aggregation
// controller, kube's "clusterrole-aggregation": every ClusterRole with an
// aggregationRule gets, as its rules, the union of the rules of the
// ClusterRoles any of its clusterRoleSelectors match (itself excepted),
// taken selector by selector and, within one, by role name, identical
// rules kept once. It writes only when the rules differ, so `kubectl get
// clusterrole admin -o yaml` shows what admin grants. Any ClusterRole
// added, changed or deleted queues every aggregated one, as kube does
// (the set is small and the dependency graph unknown); an aggregated role
// that matches another aggregated one follows it on the next round.
//
// The authorizer (package auth) applies the same aggregation when it
// evaluates a policy, so a new aggregate-to-* role counts before this
// controller, which runs on the leader only, has written it.
//
// Concurrency: Run owns the workers and the queue and returns when all
// have stopped; a ClusterRole is synced by one worker at a time (the
// queue guarantees it).
package clusterroleaggregation
