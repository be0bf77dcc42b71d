// Package job is litek8s's Job controller (kube's "job" controller): it
// runs a Job's pods to spec.completions successful ones, at most
// spec.parallelism at a time (NonIndexed, or Indexed: one pod per
// completion index, with the batch.kubernetes.io/job-completion-index
// annotation and label and status.completedIndexes), counts failures
// against backoffLimit and activeDeadlineSeconds, honours spec.suspend,
// and reports status.active/ready/succeeded/failed, startTime,
// completionTime and the SuccessCriteriaMet/Complete,
// FailureTarget/Failed and Suspended conditions. A finished Job with
// ttlSecondsAfterFinished is deleted when its time is up (kube's
// ttl-after-finished controller).
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
