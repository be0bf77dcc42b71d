package table

import "github.com/tidwall/gjson"

var podDisruptionBudgetColumns = []Column{
	nameColumn,
	{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
	{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
	{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
	ageColumn,
}

// podDisruptionBudgetCells follows kube's printPodDisruptionBudget: the
// int-or-string bounds as strings ("1", "50%"), "N/A" when unset.
func podDisruptionBudgetCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(intOrString(o.spec.Get("minAvailable"), "N/A"))
	w.str(intOrString(o.spec.Get("maxUnavailable"), "N/A"))
	w.num(o.status.Get("disruptionsAllowed").Int())
	w.age(o.created)
}

// intOrString renders an IntOrString as its String method does, or def
// when null or absent.
func intOrString(v gjson.Result, def string) string {
	switch v.Type {
	case gjson.Number:
		return v.Raw
	case gjson.String:
		return v.Str
	}
	return def
}
