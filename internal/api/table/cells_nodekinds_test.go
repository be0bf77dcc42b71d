package table

import (
	"testing"
	"time"
)

// TestCellsNodeKinds covers the printers of the kinds a kubelet,
// kube-proxy and DRA drivers use (CSI, RuntimeClass, ServiceCIDR,
// IPAddress, resource.k8s.io), against kube's printers.go.
func TestCellsNodeKinds(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const meta = `"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z"}`
	const deleting = `"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z","deletionTimestamp":"2026-11-30T09:59:30Z"}`
	tests := []struct {
		name, resource, obj, want string
	}{
		{"csidriver defaults", "csidrivers.storage.k8s.io", `{` + meta + `,"spec":{}}`,
			`["x",true,false,false,"\u003cunset\u003e",false,"\u003cnone\u003e","60s"]`},
		{"csidriver", "csidrivers.storage.k8s.io", `{` + meta + `,"spec":{"attachRequired":false,"podInfoOnMount":true,` +
			`"storageCapacity":true,"tokenRequests":[{"audience":"a"},{"audience":"b"}],"requiresRepublish":true,` +
			`"volumeLifecycleModes":["Persistent","Ephemeral"]}}`,
			`["x",false,true,true,"a,b",true,"Persistent,Ephemeral","60s"]`},
		{"csinode", "csinodes.storage.k8s.io", `{` + meta + `,"spec":{"drivers":[{"name":"a"},{"name":"b"}]}}`, `["x",2,"60s"]`},
		{"csistoragecapacity", "csistoragecapacities.storage.k8s.io", `{` + meta + `,"storageClassName":"fast","capacity":"1024Mi"}`,
			`["x","fast","1Gi"]`},
		{"csistoragecapacity unset", "csistoragecapacities.storage.k8s.io", `{` + meta + `,"storageClassName":"fast"}`,
			`["x","fast","\u003cunset\u003e"]`},
		{"volumeattachment", "volumeattachments.storage.k8s.io", `{` + meta + `,"spec":{"attacher":"csi.example.com",` +
			`"source":{"persistentVolumeName":"pv1"},"nodeName":"n1"},"status":{"attached":true}}`,
			`["x","csi.example.com","pv1","n1",true,"60s"]`},
		{"volumeattributesclass", "volumeattributesclasses.storage.k8s.io", `{` + meta + `,"driverName":"d"}`, `["x","d","60s"]`},
		{"runtimeclass", "runtimeclasses.node.k8s.io", `{` + meta + `,"handler":"runc"}`, `["x","runc","60s"]`},
		{"servicecidr", "servicecidrs.networking.k8s.io", `{` + meta + `,"spec":{"cidrs":["10.96.0.0/12","fd00::/108"]}}`,
			`["x","10.96.0.0/12,fd00::/108","60s"]`},
		{"ipaddress of a service", "ipaddresses.networking.k8s.io", `{` + meta + `,"spec":{"parentRef":{"group":"","resource":"services",` +
			`"namespace":"default","name":"Web"}}}`, `["x","services/default/Web"]`},
		{"ipaddress of a gateway", "ipaddresses.networking.k8s.io", `{` + meta + `,"spec":{"parentRef":{"group":"Gateway.Networking.k8s.io",` +
			`"resource":"Gateways","name":"gw"}}}`, `["x","gateways.gateway.networking.k8s.io/gw"]`},
		{"ipaddress without parent", "ipaddresses.networking.k8s.io", `{` + meta + `,"spec":{}}`, `["x","\u003cnone\u003e"]`},
		{"deviceclass", "deviceclasses.resource.k8s.io", `{` + meta + `,"spec":{}}`, `["x","60s"]`},
		{"resourceclaimtemplate", "resourceclaimtemplates.resource.k8s.io", `{` + meta + `,"spec":{}}`, `["x","60s"]`},
		{"resourceclaim pending", "resourceclaims.resource.k8s.io", `{` + meta + `,"spec":{}}`, `["x","pending","60s"]`},
		{"resourceclaim reserved", "resourceclaims.resource.k8s.io", `{` + meta + `,"status":{"allocation":{},"reservedFor":[{"name":"p"}]}}`,
			`["x","allocated,reserved","60s"]`},
		{"resourceclaim deleted", "resourceclaims.resource.k8s.io", `{` + deleting + `}`, `["x","deleted","60s"]`},
		{"resourceclaim deleted allocated", "resourceclaims.resource.k8s.io", `{` + deleting + `,"status":{"allocation":{}}}`,
			`["x","deleted,allocated","60s"]`},
		{"resourceslice", "resourceslices.resource.k8s.io", `{` + meta + `,"spec":{"nodeName":"n1","driver":"gpu.example.com",` +
			`"pool":{"name":"p"}}}`, `["x","n1","gpu.example.com","p","60s"]`},
		{"resourceslice all nodes", "resourceslices.resource.k8s.io", `{` + meta + `,"spec":{"allNodes":true,"driver":"d","pool":{"name":"p"}}}`,
			`["x","","d","p","60s"]`},
		{"devicetaintrule", "devicetaintrules.resource.k8s.io", `{` + meta + `,"spec":{"taint":{"key":"k","value":"v","effect":"NoSchedule",` +
			`"timeAdded":"2026-11-30T09:58:00Z"}}}`, `["x","k","v","NoSchedule","2m","60s"]`},
		{"devicetaintrule without time", "devicetaintrules.resource.k8s.io", `{` + meta + `,"spec":{"taint":{"key":"k","effect":"None"}}}`,
			`["x","k","","None","","60s"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendCells(nil, Lookup(tt.resource).Cells([]byte(tt.obj)), now))
			if got != tt.want {
				t.Errorf("\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}
