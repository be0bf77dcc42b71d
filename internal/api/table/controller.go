package table

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
)

// The other core/v1 kinds with printers: ReplicationController,
// PodTemplate and ResourceQuota.

var replicationControllerColumns = []Column{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
	ageColumn,
	{Name: "Containers", Type: "string", Priority: 1, Description: descContainers},
	{Name: "Images", Type: "string", Priority: 1, Description: descImages},
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
}

// replicationControllerCells follows kube's printReplicationController with
// Wide set; the selector is a plain label map.
func replicationControllerCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.num(replicas(o.spec))
	w.num(o.status.Get("replicas").Int())
	w.num(o.status.Get("readyReplicas").Int())
	w.age(o.created)
	containers := o.spec.Get("template.spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
	w.labelSet(o.spec.Get("selector"))
}

var podTemplateColumns = []Column{
	nameColumn,
	{Name: "Containers", Type: "string", Description: descContainers},
	{Name: "Images", Type: "string", Description: descImages},
	{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
}

// podTemplateCells follows kube's printPodTemplate (which has no Age).
func podTemplateCells(o *object, w *rowWriter) {
	template := o.get("template")
	w.str(o.name)
	containers := template.Get("spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
	w.labelSet(template.Get("metadata.labels"))
}

var resourceQuotaColumns = []Column{
	nameColumn,
	{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
	{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
	ageColumn,
}

// resourceQuotaCells follows kube's printResourceQuota: "<resource>:
// <used>/<hard>" for each hard limit in status, sorted by name, the
// "limits.*" ones in the Limit column.
func resourceQuotaCells(o *object, w *rowWriter) {
	hard, used := o.status.Get("hard"), o.status.Get("used")
	var names []string
	forEachMember(hard, func(k, _ gjson.Result) bool {
		names = append(names, k.Str)
		return true
	})
	slices.Sort(names)
	var requests, limits []string
	for _, n := range names {
		s := n + ": " + quantity(memberOf(used, n)) + "/" + quantity(memberOf(hard, n))
		if first, _, ok := strings.Cut(n, "."); ok && first == "limits" {
			limits = append(limits, s)
		} else {
			requests = append(requests, s)
		}
	}
	w.str(o.name)
	w.str(strings.Join(requests, ", "))
	w.str(strings.Join(limits, ", "))
	w.age(o.created)
}
