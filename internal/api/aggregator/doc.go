// Package aggregator is litek8s' API aggregation (kube-aggregator): the
// group/versions of the APIServices (apiregistration.k8s.io/v1) that name
// a Service are proxied to that Service, after the API server has
// authenticated and authorized the request, with the user in kube's
// front-proxy headers (X-Remote-User, X-Remote-Uid, X-Remote-Group,
// X-Remote-Extra-<key>) and the member's front-proxy client certificate
// on the TLS connection. Services are reached through
// internal/api/svcclient (EndpointSlices, caBundle or
// insecureSkipTLSVerify, SNI <svc>.<ns>.svc).
//
// The Aggregator keeps an immutable table of the proxied group/versions,
// rebuilt when the stored APIServices change (their list's ModRev) and
// swapped in atomically; Lookup is safe for concurrent use and is only
// called for group/versions the member does not serve itself, so the
// built-in resources never pay for it. Upgrades (exec-style SPDY and
// websocket) and watch streams are proxied unbuffered by apimachinery's
// upgrade-aware proxy.
package aggregator
