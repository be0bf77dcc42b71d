package table

import (
	"testing"
	"time"
)

// TestCells covers cell semantics the golden captures do not exercise.
func TestCells(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const meta = `"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z"}`
	tests := []struct {
		name, resource, obj, want string
	}{
		{"configmap binaryData", "configmaps", `{` + meta + `,"data":{"a":"1"},"binaryData":{"b":"AA==","c":"AA=="}}`,
			`["x",3,"60s"]`},
		{"secret defaults", "secrets", `{` + meta + `}`, `["x","Opaque",0,"60s"]`},
		{"namespace terminating", "namespaces", `{` + meta + `,"status":{"phase":"Terminating"}}`, `["x","Terminating","60s"]`},
		{"lease without holder", "leases.coordination.k8s.io", `{` + meta + `,"spec":{}}`, `["x","","60s"]`},
		{"service nodeport", "services", `{` + meta + `,"spec":{"type":"NodePort","clusterIPs":["10.0.0.1"],"externalIPs":["1.2.3.4","5.6.7.8"],` +
			`"ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},{"port":53}],"selector":{"a":"1","a.b":"2"}}}`,
			`["x","NodePort","10.0.0.1","1.2.3.4,5.6.7.8","80:30080/TCP,53/TCP","60s","a.b=2,a=1"]`},
		{"service load balancer pending", "services", `{` + meta + `,"spec":{"type":"LoadBalancer","clusterIP":"10.0.0.2"}}`,
			`["x","LoadBalancer","10.0.0.2","\u003cpending\u003e","\u003cnone\u003e","60s","\u003cnone\u003e"]`},
		{"service load balancer", "services", `{` + meta + `,"spec":{"type":"LoadBalancer","clusterIPs":["None"],"externalIPs":["9.9.9.9"]},` +
			`"status":{"loadBalancer":{"ingress":[{"ip":"2.2.2.2"},{"hostname":"lb.example"},{"ip":"1.1.1.1"},{"ip":"2.2.2.2"}]}}}`,
			`["x","LoadBalancer","None","1.1.1.1,2.2.2.2,lb.example,9.9.9.9","\u003cnone\u003e","60s","\u003cnone\u003e"]`},
		{"service external name", "services", `{` + meta + `,"spec":{"type":"ExternalName","externalName":"db.example"}}`,
			`["x","ExternalName","\u003cnone\u003e","db.example","\u003cnone\u003e","60s","\u003cnone\u003e"]`},
		{"event series", "events", `{` + meta + `,"involvedObject":{"kind":"Node"},"reason":"R","type":"Warning","message":"  m \n",` +
			`"eventTime":"2026-11-30T09:50:00.123456Z","series":{"count":7,"lastObservedTime":"2026-11-30T09:58:00.000001Z"},` +
			`"reportingComponent":"ctl","source":{"host":"h"}}`,
			`["119s","Warning","R","node","","ctl, h","m","9m59s",7,"x"]`},
		{"event without times", "events", `{` + meta + `,"involvedObject":{"kind":"Pod","name":"p","fieldPath":"spec.containers{c}"}}`,
			`["\u003cunknown\u003e","","","pod/p","spec.containers{c}","","","\u003cunknown\u003e",1,"x"]`},
		{"node roles and cordon", "nodes", `{"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z","labels":{` +
			`"node-role.kubernetes.io/worker":"","node-role.kubernetes.io/control-plane":"","node-role.kubernetes.io/":"","kubernetes.io/role":"worker"}},` +
			`"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"Unknown"}],"addresses":[{"type":"ExternalIP","address":"3.3.3.3"}]}}`,
			`["x","NotReady,SchedulingDisabled","control-plane,worker","60s","","\u003cnone\u003e","3.3.3.3","\u003cunknown\u003e","\u003cunknown\u003e","\u003cunknown\u003e"]`},
		{"node without conditions", "nodes", `{` + meta + `,"status":{"nodeInfo":{"kernelVersion":"6.1"}}}`,
			`["x","Unknown","\u003cnone\u003e","60s","","\u003cnone\u003e","\u003cnone\u003e","\u003cunknown\u003e","6.1","\u003cunknown\u003e"]`},
		{"deployment expressions", "deployments.apps", `{` + meta + `,"spec":{"selector":{"matchLabels":{"b":"1"},"matchExpressions":[` +
			`{"key":"a","operator":"In","values":["y","x"]},{"key":"c","operator":"DoesNotExist"}]},` +
			`"template":{"spec":{"containers":[{"name":"a","image":"i1"},{"name":"b","image":"i2"}]}}},"status":{"readyReplicas":1,"updatedReplicas":1,"availableReplicas":1}}`,
			`["x","1/1",1,1,"60s","a,b","i1,i2","a in (x,y),b=1,!c"]`},
		{"deployment invalid selector", "deployments.apps", `{` + meta + `,"spec":{"replicas":0,"selector":{"matchExpressions":[{"key":"a","operator":"Near"}]}}}`,
			`["x","0/0",0,0,"60s","","","\u003cinvalid\u003e"]`},
		{"replicaset empty selector", "replicasets.apps", `{` + meta + `,"spec":{"replicas":3,"selector":{}},"status":{"replicas":2,"readyReplicas":1}}`,
			`["x",3,2,1,"60s","","","\u003cnone\u003e"]`},
		{"replicaset bad selector", "replicasets.apps", `{` + meta + `,"spec":{"selector":{"matchLabels":{"bad key!":"v"}}}}`,
			`["x",1,0,0,"60s","","","\u003cerror\u003e"]`},
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
