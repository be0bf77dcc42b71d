// Package svcclient is how the API server reaches a server it was told
// about: an admission webhook, a CRD conversion webhook, an aggregated API
// server. Each names either a URL or a Service (namespace, name, port,
// path) and a CA bundle; a Service is resolved, as kube-apiserver does
// with endpoint routing, through its EndpointSlices to one ready endpoint
// (picked at random), and its certificate is verified against the CA
// bundle for the name <service>.<namespace>.svc.
//
// Clients share one transport per (CA bundle, server name, skip-verify)
// so that connections are kept alive between calls. Nothing here is on a
// hot path unless a webhook or aggregated API is configured.
package svcclient
