// Package table owns the server-side Table printers: the columns and cells
// that kube-apiserver 1.37 returns for `kubectl get` (Accept
// application/json;as=Table;g=meta.k8s.io), for the built-in resources
// litek8s serves, plus kube's default convertor (Name, Created At) for any
// other resource.
//
// The work is split in two so that serving a Table never parses an object:
// Printer.Cells computes a row's cells once, when a write is applied, from
// the object's raw JSON; AppendCells renders them at request time, filling in
// the only clock-dependent part (ages such as "19s", as kube's
// translateTimestampSince does). Column definitions are encoded once per
// printer.
//
// The cell semantics follow kube's printers (pkg/printers/internalversion),
// including the defaults kube applies when it decodes a stored object
// (Secret type Opaque, Service type ClusterIP and port protocol TCP,
// Namespace phase Active, Deployment/ReplicaSet replicas 1).
//
// Concurrency: printers are built once and immutable; every function here is
// safe for concurrent use. The cells a Printer returns are one kv.Row per
// object (one exactly sized allocation) and must not be modified.
package table
