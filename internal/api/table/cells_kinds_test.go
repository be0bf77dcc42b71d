package table

import (
	"testing"
	"time"
)

// TestCellsKinds covers cell semantics of the printers of the kinds added
// after the first ones that the golden captures do not exercise (kube's
// printers are the reference).
func TestCellsKinds(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const meta = `"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z"}`
	const deleting = `"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z","deletionTimestamp":"2026-11-30T09:59:30Z"`
	tests := []struct {
		name, resource, obj, want string
	}{
		{"statefulset", "statefulsets.apps", `{` + meta + `,"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"a","image":"i"}]}}},` +
			`"status":{"readyReplicas":2}}`, `["x","2/3","60s","a","i"]`},
		{"daemonset", "daemonsets.apps", `{` + meta + `,"spec":{"selector":{"matchLabels":{"a":"1"}},"template":{"spec":{}}},` +
			`"status":{"desiredNumberScheduled":3,"currentNumberScheduled":2,"numberReady":1,"updatedNumberScheduled":2,"numberAvailable":1}}`,
			`["x",3,2,1,2,1,"\u003cnone\u003e","60s","","","a=1"]`},
		{"controllerrevision of a statefulset", "controllerrevisions.apps", `{"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z",` +
			`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p"},{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","controller":true}]},"revision":2}`,
			`["x","statefulset.apps/web",2,"60s"]`},
		{"controllerrevision of a core kind", "controllerrevisions.apps", `{"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z",` +
			`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","controller":true}]},"revision":1}`,
			`["x","pod/p",1,"60s"]`},
		{"controllerrevision without controller", "controllerrevisions.apps", `{` + meta + `,"revision":3}`, `["x","\u003cnone\u003e",3,"60s"]`},
		{"job complete", "jobs.batch", `{` + meta + `,"spec":{"completions":3},"status":{"succeeded":3,` +
			`"startTime":"2026-11-30T09:50:00Z","completionTime":"2026-11-30T09:52:30Z","conditions":[{"type":"Complete","status":"True"}]}}`,
			`["x","Complete","3/3","2m30s","60s","","","\u003cnone\u003e"]`},
		{"job running in parallel", "jobs.batch", `{` + meta + `,"spec":{"parallelism":4},"status":{"succeeded":1,` +
			`"startTime":"2026-11-30T09:58:00Z","conditions":[{"type":"Failed","status":"False"}]}}`,
			`["x","Running","1/1 of 4","2m","60s","","","\u003cnone\u003e"]`},
		{"job terminating beats suspended", "jobs.batch", `{` + deleting + `},"spec":{"completions":1},` +
			`"status":{"conditions":[{"type":"Suspended","status":"True"}]}}`,
			`["x","Terminating","0/1","","60s","","","\u003cnone\u003e"]`},
		{"job suspended", "jobs.batch", `{` + meta + `,"status":{"conditions":[{"type":"Suspended","status":"True"}]}}`,
			`["x","Suspended","0/1","","60s","","","\u003cnone\u003e"]`},
		{"cronjob", "cronjobs.batch", `{` + meta + `,"spec":{"schedule":"*/5 * * * *","timeZone":"Europe/Paris","suspend":true,` +
			`"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}},` +
			`"status":{"active":[{"name":"a"},{"name":"b"}],"lastScheduleTime":"2026-11-30T09:58:00Z"}}`,
			`["x","*/5 * * * *","Europe/Paris","True",2,"2m","60s","c","i","\u003cnone\u003e"]`},
		{"cronjob unset suspend, empty zone", "cronjobs.batch", `{` + meta + `,"spec":{"schedule":"@daily","timeZone":""}}`,
			`["x","@daily","","\u003cunset\u003e",0,"\u003cnone\u003e","60s","","","\u003cnone\u003e"]`},
		{"endpoints with more", "endpoints", `{` + meta + `,"subsets":[{"addresses":[{"ip":"1.1.1.1"},{"ip":"2.2.2.2"}],` +
			`"ports":[{"port":80},{"port":443}]}]}`, `["x","1.1.1.1:80,2.2.2.2:80,1.1.1.1:443 + 1 more...","60s"]`},
		{"endpoints IPv6 and no ports", "endpoints", `{` + meta + `,"subsets":[{"addresses":[{"ip":"::1"}],"ports":[{"port":80}]},` +
			`{"addresses":[{"ip":"10.0.0.1"}]}]}`, `["x","[::1]:80,10.0.0.1","60s"]`},
		{"endpoints without addresses", "endpoints", `{` + meta + `,"subsets":[{"ports":[{"port":80}]}]}`, `["x","","60s"]`},
		{"endpointslice", "endpointslices.discovery.k8s.io", `{` + meta + `,"addressType":"FQDN","ports":[{"name":"http"},{},{"port":3},{"port":4},{"port":5}],` +
			`"endpoints":[{"addresses":["a","b"]},{"addresses":["c","d"]}]}`,
			`["x","FQDN","http,*,3 + 2 more...","a,b,c + 1 more...","60s"]`},
		{"pvc bound and terminating", "persistentvolumeclaims", `{` + deleting + `,"annotations":{"volume.beta.kubernetes.io/storage-class":"fast"}},` +
			`"spec":{"volumeName":"pv1","storageClassName":"slow","volumeAttributesClassName":"gold","volumeMode":"Block"},` +
			`"status":{"phase":"Bound","capacity":{"storage":"1024Mi"},"accessModes":["ReadWriteMany","ReadWriteOnce","ReadWriteOnce"]}}`,
			`["x","Terminating","pv1","1Gi","RWO,RWX","fast","gold","60s","Block"]`},
		{"pv", "persistentvolumes", `{` + meta + `,"spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadOnlyMany","ReadWriteOncePod"],` +
			`"persistentVolumeReclaimPolicy":"Retain","claimRef":{"namespace":"ns","name":"c"},"storageClassName":"slow"},"status":{"phase":"Bound"}}`,
			`["x","10Gi","ROX,RWOP","Retain","Bound","ns/c","slow","\u003cunset\u003e","","60s","\u003cunset\u003e"]`},
		{"resourcequota", "resourcequotas", `{` + meta + `,"status":{"hard":{"pods":"10","limits.cpu":"2","requests.memory":"1Gi"},` +
			`"used":{"pods":"3","requests.memory":"512Mi"}}}`,
			`["x","pods: 3/10, requests.memory: 512Mi/1Gi","limits.cpu: 0/2","60s"]`},
		{"podtemplate", "podtemplates", `{` + meta + `,"template":{"metadata":{"labels":{"b":"2","a":"1"}},` +
			`"spec":{"containers":[{"name":"a","image":"i1"},{"name":"b","image":"i2"}]}}}`, `["x","a,b","i1,i2","a=1,b=2"]`},
		{"replicationcontroller", "replicationcontrollers", `{` + meta + `,"spec":{"selector":{"app":"x"}},"status":{"replicas":1,"readyReplicas":1}}`,
			`["x",1,1,1,"60s","","","app=x"]`},
		{"rolebinding", "rolebindings.rbac.authorization.k8s.io", `{` + meta + `,"roleRef":{"kind":"ClusterRole","name":"view"},` +
			`"subjects":[{"kind":"User","name":"u1"},{"kind":"Robot","name":"r"},{"kind":"User","name":"u2"},{"kind":"ServiceAccount","namespace":"ns","name":"sa"}]}`,
			`["x","ClusterRole/view","60s","u1, u2","","ns/sa"]`},
		{"pdb percentage", "poddisruptionbudgets.policy", `{` + meta + `,"spec":{"minAvailable":"50%"},"status":{"disruptionsAllowed":2}}`,
			`["x","50%","N/A",2,"60s"]`},
		{"ingress", "ingresses.networking.k8s.io", `{` + meta + `,"spec":{"ingressClassName":"nginx","tls":[{}],` +
			`"rules":[{"host":"a"},{"host":"b"},{},{"host":"c"},{"host":"d"}]},` +
			`"status":{"loadBalancer":{"ingress":[{"hostname":"lb"},{"ip":"1.2.3.4"}]}}}`,
			`["x","nginx","a,b,c + 2 more...","1.2.3.4,lb","80, 443","60s"]`},
		{"ingress without rules", "ingresses.networking.k8s.io", `{` + meta + `,"spec":{}}`,
			`["x","\u003cnone\u003e","*","","80","60s"]`},
		{"ingressclass default", "ingressclasses.networking.k8s.io", `{"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z",` +
			`"annotations":{"ingressclass.kubernetes.io/is-default-class":"true"}},"spec":{"controller":"example.com/ctrl",` +
			`"parameters":{"apiGroup":"k8s.example.com","kind":"Params","name":"p"}}}`,
			`["x (default)","example.com/ctrl","Params.k8s.example.com/p","60s"]`},
		{"ingressclass", "ingressclasses.networking.k8s.io", `{` + meta + `,"spec":{"controller":"c"}}`,
			`["x","c","\u003cnone\u003e","60s"]`},
		{"networkpolicy all pods", "networkpolicies.networking.k8s.io", `{` + meta + `,"spec":{"podSelector":{}}}`,
			`["x","\u003cnone\u003e","60s"]`},
		{"hpa metrics", "horizontalpodautoscalers.autoscaling", `{` + meta + `,"spec":{"scaleTargetRef":{"kind":"StatefulSet","name":"db"},"maxReplicas":4,"metrics":[` +
			`{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"100m"}}},` +
			`{"type":"Object","object":{"target":{"type":"Value","value":"1k"}}},` +
			`{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"1Gi"}}}]},` +
			`"status":{"currentReplicas":2,"currentMetrics":[{"type":"Pods","pods":{"current":{"averageValue":"50m"}}},{"type":"Object","object":{"current":{"value":"2k"}}}]}}`,
			`["x","StatefulSet/db","50m/100m, 2k/1k + 1 more...","\u003cunset\u003e",4,2,"60s"]`},
		{"hpa container and external", "horizontalpodautoscalers.autoscaling", `{` + meta + `,"spec":{"minReplicas":2,"maxReplicas":4,"metrics":[` +
			`{"type":"ContainerResource","containerResource":{"name":"cpu","container":"app","target":{"type":"Utilization"}}},` +
			`{"type":"External","external":{"target":{"type":"AverageValue","averageValue":"5"}}}]},` +
			`"status":{"currentMetrics":[{"type":"ContainerResource","containerResource":{"current":{"averageUtilization":30}}}]}}`,
			`["x","/","cpu: 30%/\u003cauto\u003e, \u003cunknown\u003e/5 (avg)","2",4,0,"60s"]`},
		{"hpa without metrics", "horizontalpodautoscalers.autoscaling", `{` + meta + `,"spec":{"maxReplicas":1}}`,
			`["x","/","\u003cnone\u003e","\u003cunset\u003e",1,0,"60s"]`},
		{"priorityclass", "priorityclasses.scheduling.k8s.io", `{` + meta + `,"value":100,"globalDefault":true,"preemptionPolicy":"Never"}`,
			`["x",100,true,"60s","Never"]`},
		{"storageclass default", "storageclasses.storage.k8s.io", `{"metadata":{"name":"x","creationTimestamp":"2026-11-30T09:59:00Z",` +
			`"annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"p"}`,
			`["x (default)","p","Delete","Immediate",false,"60s"]`},
		{"webhooks", "validatingwebhookconfigurations.admissionregistration.k8s.io", `{` + meta + `,"webhooks":[{"name":"a"},{"name":"b"}]}`,
			`["x",2,"60s"]`},
		{"validating policy", "validatingadmissionpolicies.admissionregistration.k8s.io", `{` + meta + `,"spec":{"validations":[{},{}],` +
			`"paramKind":{"apiVersion":"v1","kind":"ConfigMap"}}}`, `["x",2,"v1/ConfigMap","60s"]`},
		{"mutating policy", "mutatingadmissionpolicies.admissionregistration.k8s.io", `{` + meta + `,"spec":{}}`,
			`["x",0,"\u003cunset\u003e","60s"]`},
		{"policy binding, any namespace", "validatingadmissionpolicybindings.admissionregistration.k8s.io", `{` + meta + `,"spec":{"policyName":"p","paramRef":{"name":"cm"}}}`,
			`["x","p","*/cm","60s"]`},
		{"policy binding, selector", "mutatingadmissionpolicybindings.admissionregistration.k8s.io", `{` + meta + `,"spec":{"policyName":"p",` +
			`"paramRef":{"selector":{"matchLabels":{"a":"1"}}}}}`,
			`["x","p","\u0026LabelSelector{MatchLabels:map[string]string{a: 1,},MatchExpressions:[]LabelSelectorRequirement{},}","60s"]`},
		{"events.k8s.io event", "events.events.k8s.io", `{` + meta + `,"regarding":{"kind":"Pod","name":"p"},"note":"hello","reason":"Started",` +
			`"type":"Normal","reportingController":"kubelet","reportingInstance":"node1","eventTime":"2026-11-30T09:58:00.000000Z"}`,
			`["2m","Normal","Started","pod/p","","kubelet, node1","hello","2m",1,"x"]`},
		{"events.k8s.io deprecated fields", "events.events.k8s.io", `{` + meta + `,"regarding":{"kind":"Node","name":"n","fieldPath":"f"},` +
			`"deprecatedSource":{"component":"c","host":"h"},"deprecatedFirstTimestamp":"2026-11-30T09:50:00Z",` +
			`"deprecatedLastTimestamp":"2026-11-30T09:55:00Z","deprecatedCount":4,"eventTime":null}`,
			`["5m","","","node/n","f","c, h","","10m",4,"x"]`},
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
