package member

import "testing"

// A CRD is served on the member as soon as it is created; its custom
// resources are stored and served like kube's apiextensions server does
// (keys sorted, status dropped on create with the status subresource,
// printer columns in Tables, items with kind/apiVersion in lists).
func TestConformanceCRD(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	// kube answers the POST with status.conditions null and sets them a
	// moment later; litek8s establishes a CRD at once (compare with the GET).
	g.run(t, exchange{golden: "objects/crd-post.json"}, cmpOpts{drop: []string{"status.conditions", "status.acceptedNames", "status.storedVersions"}})
	// kube-apiserver's CRD controllers wrote the conditions through /status
	// (managedFields entry 1); litek8s sets them on create.
	g.run(t, exchange{golden: "objects/crd-get.json"}, cmpOpts{drop: []string{"status.conditions.*.lastTransitionTime",
		"metadata.managedFields.1"}})
	g.run(t, exchange{golden: "objects/widget-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/widget-patch-status.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/widget-get.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/widget-table.json"}, cmpOpts{})
	g.run(t, exchange{golden: "lists/widgets-list.json"}, cmpOpts{})
	g.run(t, exchange{golden: "tables/widgets-table-includeObject-Object.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/404-get-missing-widget.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/widget-delete.json"}, cmpOpts{})
}
