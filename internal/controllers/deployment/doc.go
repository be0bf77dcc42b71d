// Package deployment is litek8s's Deployment controller (kube's
// "deployment" controller). It owns ReplicaSets named
// "<deployment>-<pod-template-hash>" (the hash of the pod template, as
// kube computes it, also added as the pod-template-hash label to the
// ReplicaSet's selector and template), and rolls a template change out
// with the RollingUpdate (maxSurge, maxUnavailable) or Recreate strategy.
// It keeps kube's annotations (deployment.kubernetes.io/revision,
// revision-history, desired-replicas, max-replicas) so that kubectl
// rollout history/undo/pause/resume/status work, deletes old ReplicaSets
// beyond revisionHistoryLimit, scales proportionally, and reports status
// with the Available and Progressing conditions.
//
// It decides only from what the term's informers show: a new leader
// finds the ReplicaSets of the previous term by their template, and a
// create that meets an existing ReplicaSet of the same template and owner
// takes it (AlreadyExists), so one template never has two ReplicaSets.
// During a rolling update the pods counted against replicas+maxSurge are,
// per ReplicaSet, the larger of spec.replicas and status.replicas: pods of
// an old ReplicaSet that was scaled down still count until its controller
// reports them gone, so the total never exceeds the surge.
//
// Concurrency: New registers informer handlers; Run runs Config.Workers
// workers until the term ends and waits for them. The queue never hands
// one Deployment to two workers at once.
package deployment
