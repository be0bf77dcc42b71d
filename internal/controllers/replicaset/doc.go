// Package replicaset is litek8s's ReplicaSet controller (kube's
// "replicaset" controller): it keeps spec.replicas active pods of each
// ReplicaSet, created from the template with generateName "<rs>-" and a
// controller reference; it adopts orphan pods that match the selector and
// releases pods that no longer do; scaling down deletes the least useful
// pods first (unscheduled, pending, not ready, newest); and it reports
// status.replicas, fullyLabeledReplicas, readyReplicas, availableReplicas
// (ready for minReadySeconds) and observedGeneration.
//
// It never creates or deletes while its own earlier creations and
// deletions have not come back through the pod informer (expectations):
// acting on a view that misses them would create twice.
//
// NewReplicationController runs the same controller over core/v1
// ReplicationControllers (kube's "replicationcontroller" controller), each
// converted to a ReplicaSet whose selector is the RC's label map and
// back for its status, owner references (kind ReplicationController) and
// events (source "replication-controller"); source.go is the seam.
//
// Concurrency: New registers informer handlers, Run runs Config.Workers
// workers over a rate-limited queue until the term ends and waits for
// them. The queue never hands one ReplicaSet to two workers at once.
package replicaset
