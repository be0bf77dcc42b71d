// Package faultnet is a fault-injecting TCP proxy for the fault suite: one
// sits in front of each member's listener (Raft, API), peers dial it, and
// the test tells it to delay, blackhole or drop the traffic of some
// sources (members bind their outgoing connections to their own loopback
// address, so a proxy tells them apart by source IP): partitions between
// members are made of such rules.
//
// Concurrency: a Proxy is safe for concurrent use; Close stops its
// goroutines and closes every connection.
package faultnet
