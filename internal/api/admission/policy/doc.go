// Package policy is the ValidatingAdmissionPolicy admission plugin
// (admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding), as kube-apiserver runs it.
//
// It owns reading the policies, their bindings and their params from the
// member's local store, compiling each policy once per resourceVersion
// (kube's CEL compilers: k8s.io/apiserver/pkg/admission/plugin/cel,
// environment.DefaultCompatibilityVersion with kube's cost limits) and
// dispatching a request to them with kube's own dispatcher
// (k8s.io/apiserver/pkg/admission/plugin/policy/validating): the matching
// of matchConstraints and matchResources, paramRef (name, selector,
// parameterNotFoundAction), validationActions Deny/Warn/Audit,
// auditAnnotations, failurePolicy and the wording of denials and warnings
// are kube's code, not a copy.
//
// The plugin runs where writes are executed (the leader), whose local
// store holds every applied policy, binding, param and namespace.
//
// Concurrency: a Plugin is safe for concurrent use. The compiled set is an
// immutable snapshot swapped under mu; a request with no binding in the
// store costs one List of the bindings (a lock and an allocation).
package policy
