// Package kubernetesservice keeps the default/kubernetes Service, its
// Endpoints and its EndpointSlices, through which pods reach the API
// (kube-apiserver's "kubernetes" Service controller and lease endpoint
// reconciler).
//
// The Service is created when missing, as kube-apiserver creates it:
// labels component=apiserver and provider=kubernetes, ClusterIP the first
// address of the service range (Config.ServiceIP, which the API never
// gives another Service), one port "https" 443/TCP whose targetPort is the
// members' API port; no selector, so the endpoints controllers leave it
// alone. Its ports and type are set right when they differ.
//
// The Endpoints "kubernetes" (label endpointslice.kubernetes.io/skip-mirror
// "true") list the advertised API addresses of the members that are
// serving: the leader, and every member that reported to it within
// Config.MemberTTL (members report every few hundred milliseconds; see
// raftstore's lag reports) — a stopped member drops out, a new one comes
// in. Members advertising different ports go in one subset per port, as
// kube repacks subsets. The EndpointSlice "kubernetes" (label
// kubernetes.io/service-name=kubernetes only, no managed-by, as kube's
// endpoints adapter writes it) mirrors the first subset; further port
// groups get a slice "kubernetes-<port>" each. Addresses that are not IP
// literals are left out (Endpoints hold IPs). With no such address known
// only the Service is kept (kube refuses to erase every endpoint).
//
// It also creates the default ServiceCIDR "kubernetes" (Config.ServiceCIDR,
// condition Ready), as kube-apiserver does, once per term when missing.
//
// The controller runs on the leader only (a kit.Controller of the term):
// it reconciles every Config.Interval and whenever one of those objects
// changes; its writes carry the field manager "kube-apiserver", kube's.
//
// Concurrency: Run owns its one goroutine and returns when ctx ends;
// informer handlers only signal a buffered channel.
package kubernetesservice
