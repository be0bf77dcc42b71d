// Package discovery serves Kubernetes API discovery for the resources litek8s
// serves, the way kube-apiserver 1.37 answers it:
//
//   - GET /api and GET /apis: aggregated discovery (apidiscovery.k8s.io/v2
//     APIGroupDiscoveryList, with Etag and 304 on If-None-Match) when the
//     Accept header asks for it, otherwise the legacy APIVersions (/api) and
//     APIGroupList (/apis);
//   - GET /apis/{group}: APIGroup;
//   - GET /api/{version} and GET /apis/{group}/{version}: APIResourceList.
//
// Unknown groups and versions get the plain-text "404 page not found" and an
// Accept header that allows nothing served gets a 406 Status, both as
// kube-apiserver words them.
//
// Ownership: the package owns these routes and every answer on them. It does
// not know how resources are stored or served: the caller hands New the table
// of resources (the same table its resource handlers are built from), and
// discovery only describes it.
//
// Concurrency: New computes every document once, as immutable bytes (compact
// and pretty-printed), and a Handler is never modified afterwards. Any number
// of requests may be served concurrently without locks. To serve a different
// table, build a new Handler. The one answer not precomputed is the legacy
// /api document when Config.ServerAddress is empty: it names the request's
// Host and is encoded per request.
package discovery
