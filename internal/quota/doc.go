// Package quota holds kube's ResourceQuota evaluators, shared by the
// quota admission of internal/api and the resourcequota controller: what
// an object of a resource uses (Usage), which quota resource names its
// evaluator counts (Covers), whether a quota's scopes select it
// (Matches), the pod constraints of kube's backward compatibility rule
// (Constraints), and ResourceList arithmetic.
//
// Resources are named as the store names them: the plural, qualified by
// the group unless core ("pods", "replicasets.apps"); object counts are
// "count/<that name>". Pods, services and persistentvolumeclaims have
// their own evaluators as in kube; every other resource counts objects
// (and secrets, configmaps, replicationcontrollers and resourcequotas also
// under their legacy names).
//
// Concurrency: every function is pure and safe for concurrent use.
package quota
