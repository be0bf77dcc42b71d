package table

import schedulingv1 "k8s.io/api/scheduling/v1"

var priorityClassColumns = []Column{
	nameColumn,
	{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
	{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
	ageColumn,
	{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
}

// priorityClassCells follows kube's printPriorityClass with Wide set (its
// PreemptionPolicy column has priority 0 nonetheless).
func priorityClassCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.num(o.get("value").Int())
	w.boolean(o.get("globalDefault").Bool())
	w.age(o.created)
	w.str(o.get("preemptionPolicy").String())
}
