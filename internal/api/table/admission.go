package table

// Printers of admissionregistration.k8s.io: webhook configurations and
// admission policies with their bindings.

var webhookColumns = []Column{
	nameColumn,
	{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
	ageColumn,
}

// webhookCells follows kube's printValidatingWebhook and
// printMutatingWebhook.
func webhookCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.num(countElems(o.get("webhooks")))
	w.age(o.created)
}

var validatingAdmissionPolicyColumns = []Column{
	nameColumn,
	{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
	{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
	ageColumn,
}

var mutatingAdmissionPolicyColumns = []Column{
	nameColumn,
	{Name: "Mutations", Type: "integer", Description: "Mutation indicates the number of mutations rules defined in this configuration"},
	{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
	ageColumn,
}

// admissionPolicyCells returns the printer cells of a policy whose rules
// are listed in spec.<rules>: kube's printValidatingAdmissionPolicy and
// printMutatingAdmissionPolicy.
func admissionPolicyCells(rules string) cellsFunc {
	return func(o *object, w *rowWriter) {
		w.str(o.name)
		w.num(countElems(o.spec.Get(rules)))
		paramKind := "<unset>"
		if pk := o.spec.Get("paramKind"); present(pk) {
			paramKind = pk.Get("apiVersion").String() + "/" + pk.Get("kind").String()
		}
		w.str(paramKind)
		w.age(o.created)
	}
}

var admissionPolicyBindingColumns = []Column{
	nameColumn,
	{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
	{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
	ageColumn,
}

// admissionPolicyBindingCells follows kube's
// printValidatingAdmissionPolicyBinding (and the mutating one): the param
// as "namespace/name", "*/name" without a namespace, the selector in the
// Go notation kube prints it with, or "<unset>".
func admissionPolicyBindingCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.spec.Get("policyName").String())
	param := "<unset>"
	if pr := o.spec.Get("paramRef"); present(pr) {
		name, ns := pr.Get("name").String(), pr.Get("namespace").String()
		switch sel := pr.Get("selector"); {
		case name != "" && ns != "":
			param = ns + "/" + name
		case name != "":
			param = "*/" + name
		case present(sel):
			param = labelSelector(sel).String()
		}
	}
	w.str(param)
	w.age(o.created)
}
