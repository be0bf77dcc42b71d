// Package controllers will hold the leader-only controllers (deployment,
// replicaset, scheduler, namespace, garbage collector, node lifecycle,
// simulated nodes): informers over the local change feed, writes through the
// same admission and Raft path as the API. Nothing runs here yet.
package controllers
