package member_test

import (
	"strconv"
	"strings"
	"testing"
)

// Conformance of the kinds added to the first ones (issue 3): for each,
// the golden create request is replayed and the answer compared with
// kube's (server-side defaults and mutations, managedFields included),
// then the GET and the Table list kubectl gets.

// goldenKind is one kind of the captures: its file prefix
// (objects/<file>-post.json, -get.json, -table.json) and the name of its
// golden object.
type goldenKind struct {
	file, name string
	// status: kube's controllers had written the status (and a
	// kube-controller-manager managedFields entry) before the GET and the
	// Table were captured; litek8s runs no controller for the kind, so the
	// GET is compared without them.
	status bool
	// statusCells are the Table cells computed from that status (indexes
	// in the row), left out of the comparison.
	statusCells []int
	// createdAt: the Table has kube's default columns, whose Created At
	// cell is the creation time (index 1), different on every run.
	createdAt bool
	// rowDrop lists paths of the Table row that differ from kube for a
	// reason given where it is set.
	rowDrop []string
	// warning: kube sends a deprecation Warning header with every answer
	// on the kind, which litek8s does not (yet): the head is not compared.
	warning bool
}

// conformanceKinds are in the capture order, which the creates follow.
var conformanceKinds = []goldenKind{
	{file: "statefulset", name: "golden-sts", status: true},
	// kube builds a Table row's metadata from its internal DaemonSet,
	// whose template generation is a field, not the annotation; litek8s
	// serves the stored metadata.
	{file: "daemonset", name: "golden-ds", status: true, statusCells: []int{1, 2, 4},
		rowDrop: []string{"object.metadata.annotations"}},
	{file: "job", name: "golden-job", status: true, statusCells: []int{3}},
	{file: "cronjob", name: "golden-cron"},
	{file: "endpoints", name: "golden-ep", warning: true},
	{file: "endpointslice", name: "golden-eps"},
	{file: "pvc", name: "golden-pvc"},
	{file: "role", name: "golden-role", createdAt: true},
	{file: "rolebinding", name: "golden-rb"},
	{file: "pdb", name: "golden-pdb", status: true},
	{file: "ingress", name: "golden-ing"},
	{file: "networkpolicy", name: "golden-np"},
	{file: "hpa", name: "golden-hpa", status: true, statusCells: []int{5}},
}

// clusterKinds are the cluster-scoped ones, created before the namespace
// in the captures.
var clusterKinds = []goldenKind{
	{file: "storageclass", name: "golden-sc"},
	{file: "priorityclass", name: "golden-priority"},
	{file: "clusterrole", name: "golden-clusterrole", createdAt: true},
	{file: "clusterrolebinding", name: "golden-crb"},
}

func TestConformanceKinds(t *testing.T) {
	g := newGoldenClient(t, nil)
	for _, k := range clusterKinds {
		g.runKind(t, k)
	}
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	for _, k := range conformanceKinds {
		g.runKind(t, k)
	}
}

// runKind creates the golden object of k and compares the create answer,
// the GET and the Table list with kube's.
func (g *goldenClient) runKind(t *testing.T, k goldenKind) {
	t.Helper()
	t.Run(k.file, func(t *testing.T) {
		g.checkKind(t, exchange{golden: "objects/" + k.file + "-post.json"}, k, cmpOpts{})
		var get cmpOpts
		if k.status {
			get.drop = []string{"status", "metadata.managedFields.1"}
		}
		g.checkKind(t, exchange{golden: "objects/" + k.file + "-get.json"}, k, get)
		table := cmpOpts{both: keepRows(k.name)}       // kube's cluster, and ours, hold default ClusterRoles and bindings too
		for i := len(k.statusCells) - 1; i >= 0; i-- { // from the last, as each drop shifts the next cells
			table.drop = append(table.drop, "rows.0.cells."+strconv.Itoa(k.statusCells[i]))
		}
		if k.createdAt {
			table.drop = append(table.drop, "rows.0.cells.1")
		}
		if k.status {
			table.drop = append(table.drop, "rows.0.object.metadata.managedFields.1")
		}
		for _, p := range k.rowDrop {
			table.drop = append(table.drop, "rows.0."+p)
		}
		g.checkKind(t, exchange{golden: "objects/" + k.file + "-table.json"}, k, table)
	})
}

// checkKind is check, without the comparison of the head for a kind whose
// answers carry a Warning header.
func (g *goldenClient) checkKind(t *testing.T, ex exchange, k goldenKind, opt cmpOpts) {
	t.Helper()
	what := strings.TrimPrefix(strings.TrimSuffix(ex.golden, ".json"), "objects/")
	t.Run(what, func(t *testing.T) {
		if !k.warning {
			g.check(t, ex, opt)
			return
		}
		m, resp, b := g.send(t, ex)
		if resp.StatusCode != m.status {
			t.Errorf("status %d, want %d", resp.StatusCode, m.status)
		}
		if resp.Header.Get("Warning") == "" {
			t.Logf("no Warning header; kube sends %q", m.respHeader.Get("Warning"))
		}
		compareBodies(t, readGolden(t, ex.golden), b, opt)
	})
}
