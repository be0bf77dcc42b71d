// Package datadir owns what a member keeps in its data dir besides Raft's
// state: the secrets every member of a cluster shares (the cluster CA, the
// admin and join tokens, the ServiceAccount signing key) under tls/, the
// certificates a member issues itself with them, the lock a running member
// holds on its data dir (lock.go: one process per dir), and Restore, which
// prepares a new data dir from a backup (`ctl snapshot restore`).
//
// It is a package of its own so that cmd/ctl can restore a data dir
// without linking the member (its API server and controllers).
//
// Concurrency: no state of its own; functions read and write files.
package datadir
