// Package membertest starts an in-process litek8s cluster for tests in
// other packages: N real members (member.Start) on 127.0.0.1:0 with real
// TCP Raft, real disk under t.TempDir() and the real HTTPS API, and client
// configuration for each member. It is the one cluster helper: other
// packages' tests and internal/member's own (package member_test, with
// export_test.go for the two internals they need) use it.
//
// Concurrency: a Cluster is driven by one test goroutine. Every member
// started is closed on t.Cleanup, after which the helper waits for the
// goroutine count to return to where it was when StartCluster was called
// (so register cleanups of informers and managers after StartCluster:
// t.Cleanup runs them first).
package membertest
