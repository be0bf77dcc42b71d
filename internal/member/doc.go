// Package member wires one litek8s member: its admin kubeconfig, the
// replicated store, the API server over HTTPS, joining an existing cluster
// (join.go, discovery.go for --bootstrap-expect), the admin API ctl calls
// (admin.go; its wire types in member/adminapi, which ctl imports without
// linking this package) and the leader's bootstrap work (default
// namespaces). The data dir's TLS material and secrets, and restoring a
// backup into a data dir, are member/datadir (ctl's snapshot restore uses
// it too). cmd/node reads configuration and calls Start; the in-process
// cluster tests (membertest) call it too.
//
// Concurrency: Start returns a running Member; Close stops everything it
// started and waits for it.
package member
