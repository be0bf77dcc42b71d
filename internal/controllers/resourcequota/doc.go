// Package resourcequota is kube's resourcequota controller: it keeps the
// status of every ResourceQuota, status.hard = spec.hard and status.used =
// what the objects of its namespace that its scopes select use of each
// hard resource (internal/quota's evaluators), which the API's quota
// admission then charges and checks (internal/api/admission_quota.go).
//
// A quota is synced when it is created or its spec.hard changes (not on
// status-only changes: those are the admission's or the controller's own),
// every Config.ResyncPeriod (kube's --resource-quota-sync-period), and
// promptly when an object it counts in its namespace is added or deleted,
// a pod becomes terminal or passes the end of its deletion grace period,
// or a service or claim changes what it uses (kube's replenishment).
// Pods, services and claims are read from the term's typed informers;
// every other counted resource ("count/<resource>.<group>", secrets,
// configmaps, ...) from a metadata-only informer started the first time a
// quota names it.
//
// Concurrency: informer handlers only enqueue quota keys; Config.Workers
// goroutines sync them, one quota at a time each. Status writes carry the
// cached resourceVersion: a quota the admission charged meanwhile
// conflicts and is synced again. Run returns once its workers and its
// resync ticker returned.
package resourcequota
