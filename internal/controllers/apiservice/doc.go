// Package apiservice is kube's APIService controllers, leader only: the
// autoregister controller (a Local APIService, labelled
// kube-aggregator.kubernetes.io/automanaged, for every group/version the
// API serves itself, built-in or from a CRD; those of removed CRD
// versions are deleted) and the available controller (every
// APIService's Available condition: Local, or the aggregated server's
// check, written through the status subresource when it changes).
//
// One goroutine (Run) does both every Interval; it owns nothing else.
package apiservice
