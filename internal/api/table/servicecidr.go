package table

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Printers of networking.k8s.io's Service IP ranges and addresses, and of
// node.k8s.io's RuntimeClass.

var serviceCIDRColumns = []Column{
	nameColumn,
	{Name: "CIDRs", Type: "string", Description: networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]},
	ageColumn,
}

// serviceCIDRCells follows kube's printServiceCIDR.
func serviceCIDRCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(strings.Join(stringArray(o.spec.Get("cidrs")), ","))
	w.age(o.created)
}

// ipAddressColumns are kube's: two columns. Its printer writes a third
// cell, the age, that no column describes and kubectl does not show; a
// row here has one cell per column.
var ipAddressColumns = []Column{
	nameColumn,
	{Name: "ParentRef", Type: "string", Description: networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]},
}

// ipAddressCells follows kube's printIPAddress: the parent as
// "resource[.group][/namespace]/name", lowercased up to the name.
func ipAddressCells(o *object, w *rowWriter) {
	w.str(o.name)
	parent := "<none>"
	if ref := o.spec.Get("parentRef"); present(ref) {
		gr := schema.GroupResource{Group: ref.Get("group").String(), Resource: ref.Get("resource").String()}
		parent = strings.ToLower(gr.String())
		if ns := ref.Get("namespace").String(); ns != "" {
			parent += "/" + ns
		}
		parent += "/" + ref.Get("name").String()
	}
	w.str(parent)
}

var runtimeClassColumns = []Column{
	nameColumn,
	// kube reads the description from ObjectMeta's docs, which have none.
	{Name: "Handler", Type: "string"},
	ageColumn,
}

// runtimeClassCells follows kube's printRuntimeClass.
func runtimeClassCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.get("handler").String())
	w.age(o.created)
}
