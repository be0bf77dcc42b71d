// Package namespace is litek8s's namespace controller, kube's
// "namespace-controller": it empties the namespaces being deleted and then
// removes their "kubernetes" spec finalizer, which lets the API delete
// them.
//
// For a namespace with a deletionTimestamp (and a non-empty
// spec.finalizers) it deletes every object of every namespaced resource
// the API serves (Resources: built-in and custom), pods first: the other
// resources are deleted only once no pod is left, as in kube. It deletes
// with propagationPolicy Background (the namespace controller does not
// want the garbage collector's orphan finalizer), pods with
// gracePeriodSeconds 0 while Config.ForcePods is set (litek8s runs no
// containers; see Config). It then lists what remains and records it in
// the namespace's status.conditions exactly as kube words them
// (NamespaceDeletionDiscoveryFailure, NamespaceDeletionGroupVersionParsing-
// Failure, NamespaceDeletionContentFailure, NamespaceContentRemaining,
// NamespaceFinalizersRemaining). While objects remain (held by finalizers,
// or pods still terminating) it looks again after a delay that grows from
// Config.RecheckMin to Config.RecheckMax; once nothing remains it
// finalizes the namespace (PUT .../finalize without "kubernetes").
//
// Events about a namespace wait Config.DeletionDelay before they are
// processed, as kube's do (5 s there): a create that passed the API's
// NamespaceLifecycle check just before the namespace was marked is then
// applied before the controller lists the namespace's content.
//
// Reads of the namespaces go through the term's shared informer; the
// content is listed and deleted through the API (a dynamic client, in
// process), whose answers are the store's latest state.
//
// Concurrency: Run owns the workers and the queue and returns when all
// have stopped; a namespace is processed by one worker at a time (the
// queue guarantees it).
package namespace
