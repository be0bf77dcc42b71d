// Package serviceaccount is litek8s's service account controller, kube's
// "serviceaccount-controller": every namespace that is Active holds a
// ServiceAccount named "default", which pods that name no service account
// run as (Helm charts and kubectl expect it).
//
// A namespace is synced when it is added or updated and when its "default"
// ServiceAccount is deleted: the controller creates the account if the
// term's informer does not hold it. It creates nothing in a namespace that
// is not Active (being deleted), and ignores the API's refusal when the
// namespace went away or started terminating in between (NotFound, or 403
// with the NamespaceTerminating cause) as well as AlreadyExists (an
// informer a step behind).
//
// Its writes carry the User-Agent suffix "service-account-controller",
// kube's; the account has no fields beyond its name, as in kube.
//
// Concurrency: Run owns the workers and the queue and returns when all
// have stopped; a namespace is processed by one worker at a time (the
// queue guarantees it).
package serviceaccount
