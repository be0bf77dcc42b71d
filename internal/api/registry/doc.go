// Package registry owns the table of resources litek8s serves: one
// Resource row per kind (registry.go), the built-in rows by API group
// (<group>.go; Builtin), and what a row carries besides its names:
//
//   - kube's scheme defaults and the create/update preparation of the
//     built-in kinds (defaults*.go, pod_qos.go): pure functions on typed
//     objects, run by the write path through a row's Normalize, Prepare
//     and PrepareUpdate;
//   - kind validation (validate_*.go): pure functions returning
//     field.ErrorLists, run through a row's Validate (the generic metadata
//     checks and the 422 Status they lead to stay in internal/api);
//   - field selectors (fields.go, and crd_fields.go for a CRD's
//     selectableFields): which labels a selector may use and the values a
//     stored object has for them, derived from its raw JSON at apply time;
//   - the few Service and PriorityClass facts that defaults, validation and
//     internal/api's admission share (service.go, priorityclass.go).
//
// Registry indexes rows by group/version and plural for the handlers; a
// change (a CRD) builds a new one. The store-scanning parts of admission
// (service allocations, quota, limit ranges) and everything HTTP stay in
// internal/api.
//
// Concurrency: the package holds no locks and no mutable state. A Registry
// and the rows it indexes are immutable once built and safe for concurrent
// use; the package-level field selector table is built at initialisation
// and only read afterwards. Defaults and validation functions mutate or
// read only the objects they are given.
package registry
