package table

import (
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
)

// Printers of resource.k8s.io (dynamic resource allocation).

var deviceClassColumns = []Column{nameColumn, ageColumn}

// nameAgeCells prints the name and age: kube's printDeviceClass and
// printResourceClaimTemplate.
func nameAgeCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.age(o.created)
}

var resourceClaimColumns = []Column{
	nameColumn,
	{Name: "State", Type: "string", Description: "A summary of the current state (allocated, pending, reserved, etc.)."},
	ageColumn,
}

// resourceClaimCells follows kube's printResourceClaim: the state is
// "deleted", "pending" or "allocated" with ",reserved" when the claim is
// in use.
func resourceClaimCells(o *object, w *rowWriter) {
	w.str(o.name)
	var states []string
	if o.deleting {
		states = append(states, "deleted")
	}
	if !present(o.status.Get("allocation")) {
		if !o.deleting {
			states = append(states, "pending")
		}
	} else {
		states = append(states, "allocated")
		if countElems(o.status.Get("reservedFor")) > 0 {
			states = append(states, "reserved")
		}
	}
	w.str(strings.Join(states, ","))
	w.age(o.created)
}

var resourceSliceColumns = []Column{
	nameColumn,
	{Name: "Node", Type: "string", Description: resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]},
	{Name: "Driver", Type: "string", Description: resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]},
	{Name: "Pool", Type: "string", Description: resourcev1.ResourcePool{}.SwaggerDoc()["name"]},
	ageColumn,
}

// resourceSliceCells follows kube's printResourceSlice.
func resourceSliceCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.spec.Get("nodeName").String())
	w.str(o.spec.Get("driver").String())
	w.str(o.spec.Get("pool.name").String())
	w.age(o.created)
}

var deviceTaintRuleColumns = []Column{
	nameColumn,
	{Name: "Key", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["key"]},
	{Name: "Value", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["value"]},
	{Name: "Effect", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["effect"]},
	{Name: "TimeAdded", Type: "string", Description: resourcev1.DeviceTaint{}.SwaggerDoc()["timeAdded"]},
	ageColumn,
}

// deviceTaintRuleCells follows kube's printDeviceTaint: the taint's age,
// or "" when it has no timeAdded.
func deviceTaintRuleCells(o *object, w *rowWriter) {
	w.str(o.name)
	taint := o.spec.Get("taint")
	w.str(taint.Get("key").String())
	w.str(taint.Get("value").String())
	w.str(taint.Get("effect").String())
	w.ageOr(parseTime(taint.Get("timeAdded")), "")
	w.age(o.created)
}
