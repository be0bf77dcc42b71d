// Package webhook is dynamic admission by webhooks
// (admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration) with kube-apiserver's own plugins from
// k8s.io/apiserver (MutatingAdmissionWebhook, ValidatingAdmissionWebhook):
// rules with subresources and scope, namespaceSelector, objectSelector,
// matchPolicy, matchConditions (CEL), failurePolicy, timeoutSeconds,
// sideEffects with dry-run, reinvocationPolicy, AdmissionReview v1 with
// JSONPatch, warnings, status and auditAnnotations are theirs, so the
// answers are kube's.
//
// What litek8s supplies: the configurations and namespaces come from
// informers over the member's own API (Config.Client; their caches are
// rebuilt only when a configuration changes), and clientConfig.service
// is resolved through the Service's EndpointSlices (svcclient.Resolve);
// the call is then TLS with caBundle and server name <svc>.<ns>.svc.
//
// Concurrency: Start runs the informers until Close, which waits for
// them. The plugins are safe for concurrent use. They run in the write
// path of the member executing a write (the leader), never while the Raft
// log is applied; a webhook blocks only its own write, up to its timeout.
package webhook
