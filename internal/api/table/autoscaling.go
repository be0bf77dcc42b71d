package table

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

var horizontalPodAutoscalerColumns = []Column{
	nameColumn,
	{Name: "Reference", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]},
	{Name: "Targets", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]},
	{Name: "MinPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]},
	{Name: "MaxPods", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]},
	{Name: "Replicas", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
	ageColumn,
}

// horizontalPodAutoscalerCells follows kube's printHorizontalPodAutoscaler
// on an autoscaling/v2 object. MaxPods and Replicas are numbers, MinPods a
// string ("<unset>" without minReplicas).
func horizontalPodAutoscalerCells(o *object, w *rowWriter) {
	ref := o.spec.Get("scaleTargetRef")
	w.str(o.name)
	w.str(ref.Get("kind").String() + "/" + ref.Get("name").String())
	w.str(hpaTargets(o.spec.Get("metrics"), o.status.Get("currentMetrics")))
	minPods := "<unset>"
	if m := o.spec.Get("minReplicas"); m.Type == gjson.Number {
		minPods = m.Raw
	}
	w.str(minPods)
	w.num(o.spec.Get("maxReplicas").Int())
	w.num(o.status.Get("currentReplicas").Int())
	w.age(o.created)
}

// hpaTargets follows kube's formatHPAMetrics: "current/target" per metric
// (the current value from the status metric at the same index), the first
// two joined with ", " and "+ N more...", or "<none>".
func hpaTargets(specs, statuses gjson.Result) string {
	var list []string
	status := statuses.Array()
	forEachElem(specs, func(spec gjson.Result) bool {
		var st gjson.Result
		if i := len(list); i < len(status) {
			st = status[i]
		}
		list = append(list, hpaTarget(spec, st))
		return true
	})
	const shown = 2
	switch {
	case len(list) == 0:
		return "<none>"
	case len(list) > shown:
		return strings.Join(list[:shown], ", ") + " + " + strconv.Itoa(len(list)-shown) + " more..."
	}
	return strings.Join(list, ", ")
}

// hpaTarget formats one metric; st is the status metric at its index
// (absent when the status has fewer).
func hpaTarget(spec, st gjson.Result) string {
	switch typ := spec.Get("type").String(); typ {
	case "External", "Object":
		key := strings.ToLower(typ[:1]) + typ[1:]
		target, cur := spec.Get(key+".target"), st.Get(key)
		if avg := target.Get("averageValue"); present(avg) {
			current := "<unknown>"
			if v := cur.Get("current.averageValue"); present(v) {
				current = quantity(v)
			}
			return current + "/" + quantity(avg) + " (avg)"
		}
		current := "<unknown>"
		if present(cur) {
			current = quantityPtr(cur.Get("current.value"))
		}
		return current + "/" + quantityPtr(target.Get("value"))
	case "Pods":
		current := "<unknown>"
		if cur := st.Get("pods"); present(cur) {
			current = quantityPtr(cur.Get("current.averageValue"))
		}
		return current + "/" + quantityPtr(spec.Get("pods.target.averageValue"))
	case "Resource", "ContainerResource":
		key := strings.ToLower(typ[:1]) + typ[1:]
		res, cur := spec.Get(key), st.Get(key)
		target := res.Get("target")
		name := res.Get("name").String()
		if avg := target.Get("averageValue"); present(avg) {
			current := "<unknown>"
			if present(cur) {
				current = quantityPtr(cur.Get("current.averageValue"))
			}
			return name + ": " + current + "/" + quantity(avg)
		}
		current := "<unknown>"
		if u := cur.Get("current.averageUtilization"); u.Type == gjson.Number {
			current = u.Raw + "%"
		}
		want := "<auto>"
		if u := target.Get("averageUtilization"); u.Type == gjson.Number {
			want = u.Raw + "%"
		}
		return name + ": " + current + "/" + want
	}
	return "<unknown type>"
}

// quantityPtr renders an optional quantity as (*Quantity).String does:
// "<nil>" when absent.
func quantityPtr(v gjson.Result) string {
	if !present(v) {
		return "<nil>"
	}
	return quantity(v)
}

// present reports whether an optional member is set: neither absent nor
// null.
func present(v gjson.Result) bool { return v.Exists() && v.Type != gjson.Null }
