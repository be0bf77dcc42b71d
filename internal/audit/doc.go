// Package audit is kube-apiserver's audit log: an audit.k8s.io/v1 Policy
// (policy.go: strict decoding, kube's validation, first matching rule
// wins) decides per request the level (None, Metadata, Request,
// RequestResponse), the stages to omit and whether managedFields are
// dropped; a Log (log.go) writes audit.k8s.io/v1 Events as JSON lines to
// stdout ("-") or to a file rotated as kube's lumberjack rotates it
// (rotate.go: --audit-log-maxsize, -maxbackup, -maxage, the same backup
// names).
//
// The package knows nothing of HTTP routing: internal/api builds the
// Attributes of a request (its verb and object reference, as kube's
// RequestInfo) and the Event, and calls Log.Write at each stage.
//
// Concurrency: a Policy is immutable once loaded; a Log is safe for
// concurrent use (one mutex serialises the writes, so that lines never
// interleave) and must be closed once, after the last request ended. It
// runs no goroutine.
package audit
