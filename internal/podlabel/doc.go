// Package podlabel keeps a label on the member's own Pod saying whether it
// leads, so that a Service can select the leader alone (the Helm chart's
// leader Service). It talks to the Kubernetes cluster the member runs in
// (in-cluster credentials, patch on its own Pod), not to litek8s.
//
// Concurrency: Run owns its goroutine and returns when ctx ends, after
// setting the label back to "false" (best effort).
package podlabel
