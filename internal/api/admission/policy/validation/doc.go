// Package validation checks ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding objects when they are written, with
// kube's rules and messages: required fields, supported values, and
// every CEL expression compiled with kube's compiler (a new expression in
// kube's NewExpressions environment, one already stored in
// StoredExpressions, as kube's validation does).
//
// It is separate from package policy so that the registry (which policy
// imports) can call it. Its functions are pure and safe for concurrent
// use.
package validation
