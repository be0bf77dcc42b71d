// Package statefulset is litek8s's StatefulSet controller (kube's
// "statefulset" controller, same semantics as
// k8s.io/kubernetes/pkg/controller/statefulset):
//
//   - pods <set>-<ordinal> for the ordinals spec.ordinals.start …
//     start+replicas-1, built from the template of their revision, with
//     hostname = pod name, subdomain = spec.serviceName, the labels
//     statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and
//     controller-revision-hash, and a controller reference (pods.go);
//   - one PersistentVolumeClaim <template>-<set>-<ordinal> per
//     volumeClaimTemplate, created before its pod, labelled with the
//     selector's matchLabels, owned per
//     persistentVolumeClaimRetentionPolicy: by the set when whenDeleted is
//     Delete, by a scaled-down pod when whenScaled is Delete (claims.go);
//   - podManagementPolicy OrderedReady (one pod at a time, each Running,
//     Ready and available before the next; scale down from the highest
//     ordinal, one at a time, waiting for termination) or Parallel;
//     failed pods are deleted and recreated under the same name, a
//     terminating pod is waited for (update.go);
//   - ControllerRevisions <set>-<hash> holding the template as kube stores
//     it (a strategic merge patch replacing spec.template), revision
//     numbers, collisionCount and revisionHistoryLimit (revisions.go);
//     updateStrategy RollingUpdate (partition, maxUnavailable, highest
//     ordinal first) and OnDelete;
//   - status: observedGeneration, replicas, readyReplicas,
//     currentReplicas, updatedReplicas, availableReplicas,
//     currentRevision, updateRevision, collisionCount (status.go), which
//     kubectl rollout status and Helm's --wait read.
//
// Like kube's (StaleControllerConsistencyStatefulSet) it does not act on a
// set while the informers have not yet shown its own latest writes
// (consistency.go): a sync on a view that misses a pod it just created
// would create it again.
//
// Concurrency: New registers informer handlers, Run runs Config.Workers
// workers over a rate-limited queue until the term ends and waits for
// them. The queue never hands one StatefulSet to two workers at once.
package statefulset
