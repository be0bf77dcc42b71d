package table

// apiregistration.k8s.io: APIServices as kube-aggregator prints them:
// the service ("Local" without one) and the Available condition ("True",
// or "False (Reason)", "Unknown" without a condition).

var apiServiceColumns = []Column{
	nameColumn,
	{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
	{Name: "Available", Type: "string", Description: "Whether this service is available."},
	ageColumn,
}

func apiServiceCells(o *object, w *rowWriter) {
	w.str(o.name)
	if svc := o.spec.Get("service"); svc.Exists() && svc.Type.String() != "Null" {
		w.str(svc.Get("namespace").String() + "/" + svc.Get("name").String())
	} else {
		w.str("Local")
	}
	available := "Unknown"
	for _, c := range o.status.Get("conditions").Array() {
		if c.Get("type").String() != "Available" {
			continue
		}
		status, reason := c.Get("status").String(), c.Get("reason").String()
		available = status
		if status != "True" && reason != "" {
			available = status + " (" + reason + ")"
		}
		break
	}
	w.str(available)
	w.age(o.created)
}
