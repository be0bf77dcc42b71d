package table

import (
	"strings"

	"github.com/tidwall/gjson"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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

// Column descriptions of the kinds below come from the API types' swagger
// docs, as kube's printers take them.

var statefulSetColumns = []Column{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
	ageColumn,
	{Name: "Containers", Type: "string", Priority: 1, Description: descContainers},
	{Name: "Images", Type: "string", Priority: 1, Description: descImages},
}

// statefulSetCells follows kube's printStatefulSet with Wide set.
func statefulSetCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.ratio(o.status.Get("readyReplicas").Int(), replicas(o.spec))
	w.age(o.created)
	containers := o.spec.Get("template.spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
}

var daemonSetColumns = []Column{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
	{Name: "Current", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
	{Name: "Ready", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
	{Name: "Up-to-date", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
	{Name: "Available", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
	{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
	ageColumn,
	{Name: "Containers", Type: "string", Priority: 1, Description: descContainers},
	{Name: "Images", Type: "string", Priority: 1, Description: descImages},
	{Name: "Selector", Type: "string", Priority: 1, Description: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]},
}

// daemonSetCells follows kube's printDaemonSet with Wide set.
func daemonSetCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.num(o.status.Get("desiredNumberScheduled").Int())
	w.num(o.status.Get("currentNumberScheduled").Int())
	w.num(o.status.Get("numberReady").Int())
	w.num(o.status.Get("updatedNumberScheduled").Int())
	w.num(o.status.Get("numberAvailable").Int())
	w.labelSet(o.spec.Get("template.spec.nodeSelector"))
	w.age(o.created)
	containers := o.spec.Get("template.spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
	w.str(formatSelector(o.spec.Get("selector")))
}

var controllerRevisionColumns = []Column{
	nameColumn,
	{Name: "Controller", Type: "string", Description: "Controller of the object"},
	{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
	ageColumn,
}

// controllerRevisionCells follows kube's printControllerRevision: the
// controller is "<kind>[.<group>]/<name>" in lower case, or "<none>".
func controllerRevisionCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(controllerOf(o.ownerReferences))
	w.num(o.get("revision").Int())
	w.age(o.created)
}

// controllerOf formats the ownerReference marked controller as kube's
// formatResourceName does.
func controllerOf(refs gjson.Result) string {
	out := "<none>"
	forEachElem(refs, func(ref gjson.Result) bool {
		if !ref.Get("controller").Bool() {
			return true
		}
		gk := schema.GroupKind{Kind: ref.Get("kind").String()}
		if gv, err := schema.ParseGroupVersion(ref.Get("apiVersion").String()); err == nil {
			gk.Group = gv.Group
		}
		name := ref.Get("name").String()
		out = name
		if !gk.Empty() {
			out = strings.ToLower(gk.String()) + "/" + name
		}
		return false
	})
	return out
}
