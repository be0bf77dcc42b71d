// Package member wires one litek8s member: its TLS material and admin
// kubeconfig under the data dir, the replicated store, the API server over
// HTTPS, joining an existing cluster, and the leader's bootstrap work
// (default namespaces). cmd/node reads configuration and calls Start; the
// in-process cluster tests call it too.
//
// Concurrency: Start returns a running Member; Close stops everything it
// started and waits for it.
package member
