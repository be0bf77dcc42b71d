// Package api is litek8s's HTTP surface: routing, get/list/watch/create/
// update/delete, Tables, admission (names, uid and timestamps; kube's pod
// admission plugins ServiceAccount, DefaultTolerationSeconds and Priority
// in admission_pod.go; quota, LimitRanger and Service allocations against
// the store), bearer-token authentication, write forwarding to the leader
// and Kubernetes Status errors. What it serves is the table of rows in
// internal/api/registry (one registry.Resource per kind, with kube's
// defaults, kind validation and field selectors); discovery, OpenAPI and
// the Table printers live in the other subpackages. docs/architecture.md
// walks the write and read paths through these files. Discovery, OpenAPI and the Table
// printers live in its subpackages. The write path (write.go) covers
// patches of every type and server-side apply with managedFields
// (fieldmanager.go, apply.go), the status, scale, binding and finalize
// subresources, deletion with finalizers, graceful pod deletion and
// namespace termination (finalize.go, namespace.go), pods/eviction with
// PodDisruptionBudgets (eviction.go), pods/ephemeralcontainers and
// pods/resize (podsub.go), and the connect subresources (connect*.go:
// pods/log, exec, attach, portforward and the nodes, pods and services
// proxies), which any member relays to the kubelet or pod itself through
// Config.Kubelets (package kubeletclient). Metrics (metrics.go,
// docs/metrics.md) are kube-apiserver's request series, counted in one
// place around the router (instrument) and labelled by the routing
// (serveResource calls observe), and the stored objects per resource, read
// from the store at scrape time. Limits (limits.go, the outermost handler)
// bound bodies, stored objects, requests in flight (atomic counters per
// class) and how long a request may run.
// Who may do what is authz.go (authentication, the Node,RBAC chain) with
// nodeauth.go (the Node authorizer's graph, bootstrap tokens); admission
// that depends on the writer is admission_user.go (CSRs),
// noderestriction.go (NodeRestriction) and admission_rbac.go (RBAC
// escalation prevention).
// The audit log (audit.go, audit_attrs.go; Config.Audit, package audit)
// starts in authenticate once the user is known; without a policy nothing
// of it runs.
//
// Concurrency: a Server is safe for concurrent use; handlers share only the
// immutable registry and the Store, whose objects are immutable. Get, list
// and watch write stored bytes to the response without parsing them; the
// exceptions are answers no kubectl or client-go default asks for (YAML,
// protobuf-only clients, see negotiate.go), custom resources'
// PartialObjectMetadata (partial.go) and field selectors on a CRD's
// selectableFields (registry/crd_fields.go). Writes parse and re-encode (on the
// leader only). A Server runs no goroutine besides its handlers: a pod
// deleted gracefully is finished by its kubelet's final DELETE (see
// finalize.go).
package api
