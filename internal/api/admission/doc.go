// Package admission is the chain of dynamic admission plugins in the write
// path (kube's MutatingAdmissionWebhook, ValidatingAdmissionPolicy,
// ValidatingAdmissionWebhook, in that order). Plugins are kube's own
// interfaces from k8s.io/apiserver/pkg/admission: the API server builds an
// admission.Attributes record for each write (Attributes) and calls Admit
// (mutating plugins in order, reinvoked once when a plugin asks for it,
// before the built-in defaulting and validation) and then Validate (after
// the built-in validation, before quota).
//
// A Chain is immutable once built and safe for concurrent use; plugins
// must be too. A plugin that implements Idler lets the chain skip building
// attributes when it has nothing to do, so that a write with no webhook or
// policy configured costs one check per plugin.
package admission
