// Command api_load measures a litek8s cluster under load (issue 4): it
// starts 1 or 3 real members in this process, or as `node` processes with
// -processes (real Raft over TCP on 127.0.0.1, the WAL on disk under a
// temporary directory removed at exit, the real HTTPS API), fills it with ConfigMaps, and loads it over HTTP/1.1
// keep-alive connections from concurrent clients, one scenario at a time.
// Each scenario reports ops/s and p50/p90/p99 latency, each figure the
// median of -runs runs; then the targets of issue 4 as ratios measured in
// the same run. See bench/README.md.
//
//	go run ./bench/api_load                        # every scenario, 3 members
//	go run ./bench/api_load -scenario list_all -cpuprofile /tmp/cpu.out
//	go run ./bench/api_load -idle-rss              # target 9: one member process
//	go run ./bench/api_load -processes -objects 100000 -scenario get   # each member's RSS and heap (issue 20)
//	go run ./bench/api_load -processes -scenario get -ops all          # + a restart, a join, a backup round trip (ops.go)
//
// Every namespace also holds the kube-root-ca.crt of the root CA
// publisher, as on kube: the list scenarios' whole lists return the
// -objects ConfigMaps and it (list_paged: one more, smaller page at
// -objects 1000).
//
// Any failed request (a status other than the expected one, a response
// that does not decode, a missing watch event) fails the run: exit 1.
//
// Concurrency: one goroutine drives the bench (set-up, scenarios one run at
// a time, tear-down); each run starts its client goroutines in a group that
// stops at the first error and waits for all of them before the next run.
// With -processes, the members are reached over HTTP only (cluster.go's
// memberSet; procs.go), and each is stopped with SIGTERM and reaped
// whatever happens; so are the processes -ops starts (nodeProcs.extra),
// one op at a time after the scenarios.
package main
