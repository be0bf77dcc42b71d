// Package job is litek8s's Job controller (kube's "job" controller): it
// runs a Job's pods to spec.completions successful ones, at most
// spec.parallelism at a time (NonIndexed, or Indexed: one pod per
// completion index, with the batch.kubernetes.io/job-completion-index
// annotation and label and status.completedIndexes), counts failures
// against backoffLimit and activeDeadlineSeconds, honours spec.suspend,
// and reports status.active/ready/terminating (always set, 0 included),
// succeeded/failed, startTime, completionTime and the conditions.
// spec.podFailurePolicy (failurepolicy.go) decides what a failed pod
// means (FailJob, FailIndex, Ignore, Count); spec.backoffLimitPerIndex
// and maxFailedIndexes (perindex.go) retry each index on its own and
// report status.failedIndexes and the job-index-failure-count pod
// annotation; spec.successPolicy (successpolicy.go) ends an Indexed job
// once a rule matches. As kube 1.37 does, the outcome is first an interim
// condition (SuccessCriteriaMet or FailureTarget, with its reason), the
// remaining pods are deleted, and the final one (Complete with
// completionTime, or Failed; same reason) is added once no pod is active
// or terminating. A finished Job with ttlSecondsAfterFinished is deleted
// when its time is up (kube's ttl-after-finished controller). A Job whose
// spec.managedBy names another controller is left alone.
//
// Pods carry the labels the API gives the Job's template
// (batch.kubernetes.io/job-name, controller-uid). litek8s does not add
// the batch.kubernetes.io/job-tracking finalizer: succeeded and failed
// pods are counted while they exist, and the counts in status never go
// down.
//
// Concurrency: New registers informer handlers; Run runs Config.Workers
// workers until the term ends and waits for them. Creations and deletions
// wait for the informer (expectations), as in the replicaset controller.
package job
