package table

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/api/golden"
)

// readGolden returns a capture of internal/api/testdata/golden.
var readGolden = golden.Read

// goldenNow returns the Date header of a golden response: the clock at which
// kube rendered the Table's ages (to the second).
func goldenNow(t *testing.T, body string) time.Time {
	t.Helper()
	meta := readGolden(t, strings.TrimSuffix(body, ".json")+".meta")
	sc := bufio.NewScanner(bytes.NewReader(meta))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Date: "); ok {
			now, err := http.ParseTime(v)
			if err != nil {
				t.Fatal(err)
			}
			return now
		}
	}
	t.Fatalf("%s.meta has no Date header", body)
	return time.Time{}
}

// TestGolden compares column definitions and cells, byte for byte, with the
// Tables kube-apiserver returned for the same objects.
func TestGolden(t *testing.T) {
	tests := []struct {
		resource string
		object   string // file holding the object
		table    string // file holding the Table
		row      string // metadata.name of the Table row
	}{
		{"namespaces", "objects/namespace-get.json", "objects/namespace-table.json", "golden"},
		{"configmaps", "objects/configmap-get.json", "objects/configmap-table.json", "golden-cm"},
		{"secrets", "objects/secret-get.json", "objects/secret-table.json", "golden-secret"},
		{"services", "objects/service-get.json", "objects/service-table.json", "golden-svc"},
		{"pods", "objects/pod-get.json", "objects/pod-table.json", "golden-pod"},
		{"pods terminating", "delete/pod-delete-graceful.json", "tables/pods-table-with-terminating.json", "golden-pod"},
		{"nodes", "objects/node-get.json", "objects/node-table.json", "golden-node"},
		{"events", "objects/event-get.json", "objects/event-table.json", "golden-pod.golden0001"},
		{"serviceaccounts", "objects/serviceaccount-get.json", "objects/serviceaccount-table.json", "golden-sa"},
		{"deployments.apps", "objects/deployment-get.json", "objects/deployment-table.json", "golden-deploy"},
		{"replicasets.apps", "objects/replicaset-get.json", "objects/replicaset-table.json", "golden-deploy-54c7cc8fbc"},
		{"leases.coordination.k8s.io", "objects/lease-get.json", "objects/lease-table.json", "golden-lease"},
		{"roles.rbac.authorization.k8s.io", "objects/role-get.json", "objects/role-table.json", "golden-role"},
		{"statefulsets.apps", "objects/statefulset-get.json", "objects/statefulset-table.json", "golden-sts"},
		{"daemonsets.apps", "objects/daemonset-get.json", "objects/daemonset-table.json", "golden-ds"},
		{"jobs.batch", "objects/job-get.json", "objects/job-table.json", "golden-job"},
		{"cronjobs.batch", "objects/cronjob-get.json", "objects/cronjob-table.json", "golden-cron"},
		{"endpoints", "objects/endpoints-get.json", "objects/endpoints-table.json", "golden-ep"},
		{"endpointslices.discovery.k8s.io", "objects/endpointslice-get.json", "objects/endpointslice-table.json", "golden-eps"},
		{"persistentvolumeclaims", "objects/pvc-get.json", "objects/pvc-table.json", "golden-pvc"},
		{"poddisruptionbudgets.policy", "objects/pdb-get.json", "objects/pdb-table.json", "golden-pdb"},
		{"ingresses.networking.k8s.io", "objects/ingress-get.json", "objects/ingress-table.json", "golden-ing"},
		{"networkpolicies.networking.k8s.io", "objects/networkpolicy-get.json", "objects/networkpolicy-table.json", "golden-np"},
		{"horizontalpodautoscalers.autoscaling", "objects/hpa-get.json", "objects/hpa-table.json", "golden-hpa"},
		{"priorityclasses.scheduling.k8s.io", "objects/priorityclass-get.json", "objects/priorityclass-table.json", "golden-priority"},
		{"storageclasses.storage.k8s.io", "objects/storageclass-get.json", "objects/storageclass-table.json", "golden-sc"},
		{"rolebindings.rbac.authorization.k8s.io", "objects/rolebinding-get.json", "objects/rolebinding-table.json", "golden-rb"},
		{"clusterroles.rbac.authorization.k8s.io", "objects/clusterrole-get.json", "objects/clusterrole-table.json", "golden-clusterrole"},
		{"clusterrolebindings.rbac.authorization.k8s.io", "objects/clusterrolebinding-get.json", "objects/clusterrolebinding-table.json", "golden-crb"},
		{"customresourcedefinitions.apiextensions.k8s.io", "objects/crd-get.json", "objects/crd-table.json", "widgets.golden.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			tbl := readGolden(t, tt.table)
			obj := readGolden(t, tt.object)
			p := Lookup(strings.Fields(tt.resource)[0])
			checkColumns(t, p, tbl)
			row := gjson.GetBytes(tbl, `rows.#(object.metadata.name=="`+tt.row+`").cells`)
			if !row.Exists() {
				t.Fatalf("no row %q in %s", tt.row, tt.table)
			}
			checkCells(t, p, obj, row.Raw, goldenNow(t, tt.table))
		})
	}
}

// TestGoldenFullObjects checks every row of the Tables captured with
// includeObject=Object, whose rows carry the whole object.
func TestGoldenFullObjects(t *testing.T) {
	tests := []struct{ resource, table string }{
		{"pods", "tables/pods-table-includeObject-Object.json"},
		{"deployments.apps", "tables/deployments-table-includeObject-Object.json"},
		{"nodes", "tables/nodes-table-includeObject-Object.json"},
		{"services", "tables/services-table-includeObject-Object.json"},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			tbl := readGolden(t, tt.table)
			p := Lookup(tt.resource)
			checkColumns(t, p, tbl)
			now := goldenNow(t, tt.table)
			for _, row := range gjson.GetBytes(tbl, "rows").Array() {
				obj := row.Get("object")
				t.Run(obj.Get("metadata.name").String(), func(t *testing.T) {
					checkCells(t, p, []byte(obj.Raw), row.Get("cells").Raw, now)
				})
			}
		})
	}
}

func checkColumns(t *testing.T, p *Printer, tbl []byte) {
	t.Helper()
	want := gjson.GetBytes(tbl, "columnDefinitions").Raw
	if got := string(p.AppendColumnDefinitions(nil)); got != want {
		t.Errorf("column definitions differ\n got: %s\nwant: %s", got, want)
	}
}

func checkCells(t *testing.T, p *Printer, obj []byte, want string, now time.Time) {
	t.Helper()
	cells := p.Cells(obj)
	if cells.Len() != len(p.Columns) {
		t.Fatalf("got %d cells for %d columns", cells.Len(), len(p.Columns))
	}
	if got := string(AppendCells(nil, cells, now)); got != want {
		t.Errorf("cells differ\n got: %s\nwant: %s", got, want)
	}
}

// TestPrintersColumnCount checks that every printer fills every column,
// even from an empty object.
func TestPrintersColumnCount(t *testing.T) {
	for name, p := range printers {
		if got := p.Cells([]byte(`{}`)).Len(); got != len(p.Columns) {
			t.Errorf("%s: %d cells for %d columns", name, got, len(p.Columns))
		}
	}
	if Lookup("widgets.example.com") != defaultPrinter {
		t.Error("unknown resource does not get the default printer")
	}
}

func TestDefaultCells(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tests := []struct{ name, obj, want string }{
		{"utc", `{"metadata":{"name":"a","creationTimestamp":"2026-11-30T09:57:27Z"}}`, `["a","2026-11-30T09:57:27Z"]`},
		{"offset", `{"metadata":{"name":"a","creationTimestamp":"2026-11-30T10:57:27+01:00"}}`, `["a","2026-11-30T09:57:27Z"]`},
		{"missing", `{"metadata":{"name":"a"}}`, `["a","0001-01-01T00:00:00Z"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendCells(nil, Lookup("roles.rbac.authorization.k8s.io").Cells([]byte(tt.obj)), now))
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
