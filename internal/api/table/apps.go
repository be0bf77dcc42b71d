package table

import "github.com/tidwall/gjson"

// replicas returns spec.replicas, defaulted to 1 as kube does when absent.
func replicas(spec gjson.Result) int64 {
	if r := spec.Get("replicas"); r.Type == gjson.Number {
		return r.Int()
	}
	return 1
}

// deploymentCells follows kube's printDeployment with Wide set.
func deploymentCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.ratio(o.status.Get("readyReplicas").Int(), replicas(o.spec))
	w.num(o.status.Get("updatedReplicas").Int())
	w.num(o.status.Get("availableReplicas").Int())
	w.age(o.created)
	containers := o.spec.Get("template.spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
	w.str(selectorString(o.spec.Get("selector")))
}

// replicaSetCells follows kube's printReplicaSet with Wide set.
func replicaSetCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.num(replicas(o.spec))
	w.num(o.status.Get("replicas").Int())
	w.num(o.status.Get("readyReplicas").Int())
	w.age(o.created)
	containers := o.spec.Get("template.spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
	w.str(formatSelector(o.spec.Get("selector")))
}
