// Package workload is what the workload controllers (replicaset,
// deployment, job) share: the work loop over a client-go rate-limited
// queue, create/delete expectations, controller references (adopting
// orphans, releasing what no longer matches) and pod helpers (active,
// ready, available, built from a template).
//
// Concurrency: Loop runs its workers until the term's context ends and
// waits for them; one key is never processed by two workers at once (the
// queue's guarantee). Expectations is safe for concurrent use. The other
// helpers are functions of their arguments.
package workload
