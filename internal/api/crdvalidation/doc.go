// Package crdvalidation evaluates the validation rules of CustomResourceDefinitions
// (x-kubernetes-validations, CEL) the way kube-apiserver does, with
// apiextensions-apiserver's own libraries:
//
//   - Compile builds the rule validator of one CRD version's structural
//     schema (apiextensions' schema/cel NewValidator with kube's per-call
//     cost limit); a Compiler keeps the validators of the CRD generations
//     being served so that a registry rebuild compiles only what changed.
//   - Rules.Validate evaluates them on a create (old nil) or an update with
//     kube's runtime cost budget, transition rules (oldSelf), optionalOldSelf
//     and ratcheting (unchanged invalid values of an update are not refused).
//   - CRDErrors is kube's CRD validation restricted to the rules: a rule that
//     does not compile or is estimated too expensive refuses the CRD with
//     kube's messages and field paths.
//
// Concurrency: a Rules is immutable once compiled and safe for concurrent
// use; a Compiler is safe for concurrent use (its caller, the registry
// rebuild, is serialised anyway).
package crdvalidation
