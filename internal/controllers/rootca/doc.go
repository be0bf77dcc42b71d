// Package rootca is litek8s's root CA publisher, kube's
// "root-ca-cert-publisher": every Active namespace holds a ConfigMap
// "kube-root-ca.crt" whose data is exactly {"ca.crt": <the cluster CA
// certificate, PEM>}, annotated kubernetes.io/description with kube's
// text. Pods mount it (the projected kube-api-access volume) to verify
// the API server, and charts read it.
//
// A namespace is synced when it is added, when it is updated while
// Active, and when its kube-root-ca.crt is updated or deleted: the
// controller creates the ConfigMap when the term's informer does not hold
// it, and rewrites its data and annotation when they differ (other data
// keys are removed, other metadata kept, as in kube). It writes nothing in
// a namespace that is not Active (being deleted) and ignores the API's
// refusal when the namespace went away or started terminating in between.
// With no CA (Options.RootCA empty) it publishes nothing. Its informer
// holds the ConfigMaps named kube-root-ca.crt only (kube's watches every
// ConfigMap): the leader never decodes the others.
//
// Its writes carry the User-Agent suffix "root-ca-cert-publisher", kube's,
// so the API records them under the manager "kube-controller-manager" as
// in the golden captures.
//
// Concurrency: Run owns the workers and the queue and returns when all
// have stopped; a namespace is processed by one worker at a time (the
// queue guarantees it).
package rootca
