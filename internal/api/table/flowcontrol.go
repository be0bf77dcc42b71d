package table

import (
	"github.com/tidwall/gjson"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

var flowSchemaColumns = []Column{
	nameColumn,
	{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
	{Name: "MatchingPrecedence", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]},
	{Name: "DistinguisherMethod", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]},
	ageColumn,
	{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
}

// flowSchemaCells follows kube's printFlowSchema: the distinguisher's
// type or <none>; MissingPL from the Dangling condition, "?" without one.
// (kube also sorts a list's rows by precedence; rows here keep the
// list's order.)
func flowSchemaCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.get("spec.priorityLevelConfiguration.name").String())
	w.num(o.get("spec.matchingPrecedence").Int())
	w.strOr(o.get("spec.distinguisherMethod.type").String(), "<none>")
	w.age(o.created)
	missing := "?"
	for _, c := range o.get("status.conditions").Array() {
		if c.Get("type").String() == string(flowcontrolv1.FlowSchemaConditionDangling) {
			missing = c.Get("status").String()
			break
		}
	}
	w.str(missing)
}

var priorityLevelColumns = []Column{
	nameColumn,
	{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
	{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
	{Name: "Queues", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]},
	{Name: "HandSize", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]},
	{Name: "QueueLengthLimit", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]},
	ageColumn,
}

// priorityLevelCells follows kube's printPriorityLevelConfiguration: the
// limited level's shares and queuing as numbers, "<none>" where the level
// has none.
func priorityLevelCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.get("spec.type").String())
	l := o.get("spec.limited")
	q := l.Get("limitResponse.queuing")
	for _, v := range []gjson.Result{l.Get("nominalConcurrencyShares"), q.Get("queues"), q.Get("handSize"), q.Get("queueLengthLimit")} {
		if v.Exists() {
			w.num(v.Int())
		} else {
			w.str("<none>")
		}
	}
	w.age(o.created)
}
