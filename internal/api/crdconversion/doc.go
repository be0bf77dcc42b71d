// Package crdconversion converts custom resources between the versions of
// their CustomResourceDefinition with the CRD's conversion webhook
// (spec.conversion.strategy: Webhook), as kube's apiextensions-apiserver
// does: one ConversionReview (apiextensions.k8s.io/v1, or v1beta1 when the
// CRD lists only that) per call with every object that is not already in
// the desired version, the response checked (uid, number of objects,
// apiVersion, kind, name, namespace, uid) and the objects' metadata
// restored except labels and annotations. The webhook is reached through
// svcclient (clientConfig.url or clientConfig.service with caBundle).
//
// It also holds kube's validation of spec.conversion (ValidateConversion).
//
// A Webhook is immutable and safe for concurrent use; it is built when the
// registry is built from the CRDs and dropped with it. Nothing here runs
// for a CRD with conversion None or for reads and writes in the storage
// version.
package crdconversion
