// Package membertest starts an in-process litek8s cluster for tests in
// other packages: N real members (member.Start) on 127.0.0.1:0 with real
// TCP Raft, real disk under t.TempDir() and the real HTTPS API, and client
// configuration for each member. It is the exported twin of
// internal/member's own cluster helper (cluster_test.go), which stays in
// package member because it reaches unexported state.
//
// Concurrency: a Cluster is driven by one test goroutine. Every member
// started is closed on t.Cleanup, after which the helper waits for the
// goroutine count to return to where it was when StartCluster was called
// (so register cleanups of informers and managers after StartCluster:
// t.Cleanup runs them first).
package membertest
