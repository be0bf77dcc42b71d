// Package daemonset is litek8s's DaemonSet controller (kube's "daemonset"
// controller): it keeps one pod of each DaemonSet on every node that
// should run it, and none elsewhere.
//
// A node should run a DaemonSet's pod when it matches the template's
// nodeSelector and required node affinity and the pod tolerates the
// node's NoSchedule and NoExecute taints; a pod already there keeps
// running while only the NoExecute taints are tolerated. The pod gets
// kube's daemon tolerations (not-ready and unreachable NoExecute;
// disk-, memory-, pid-pressure and unschedulable NoSchedule;
// network-unavailable for hostNetwork pods) and a required node affinity
// on the node's metadata.name (matchFields), and is bound by the default
// scheduler, as in kube.
//
// Each template is recorded in a ControllerRevision named
// "<ds>-<hash>" (at most spec.revisionHistoryLimit old ones are kept);
// pods carry the labels controller-revision-hash and
// pod-template-generation. A pod is up to date when its hash is the
// current revision's. updateStrategy RollingUpdate replaces old pods node
// by node within maxUnavailable (or first surges a new pod within
// maxSurge); OnDelete replaces a pod only once it was deleted. Failed pods
// are deleted and recreated with a per-node exponential backoff. The
// status counts what `kubectl rollout status` and Helm's --wait read.
//
// Pods on a node that was deleted are left to the pod garbage collector,
// as in kube.
//
// Concurrency: New registers informer handlers, Run runs Config.Workers
// workers over a rate-limited queue until the term ends and waits for
// them. The queue never hands one DaemonSet to two workers at once; the
// failed-pod backoff has its own lock.
package daemonset
