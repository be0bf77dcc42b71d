package registry

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestValidateGolden checks the Status kube answered for the 422s of the
// captures against the one our Validate funcs lead to: message,
// details and causes, in order.
func TestValidateGolden(t *testing.T) {
	reg := New(Builtin())
	tests := []struct {
		name    string
		status  string // the golden Status
		res     *Resource
		obj     func(t *testing.T) (obj, old runtime.Object)
		objName string
	}{
		{"immutable configmap", "errors/422-patch-immutable-configmap.json", reg.Lookup("v1", "configmaps"),
			func(t *testing.T) (runtime.Object, runtime.Object) {
				old := &corev1.ConfigMap{}
				mustUnmarshal(t, readGolden(t, "misc/configmap-get-accept-any.json"), old)
				cm := old.DeepCopy()
				cm.Data["k"] = "changed"
				return cm, old
			}, "golden-immutable"},
		{"immutable selector", "errors/422-patch-immutable-selector.json", reg.Lookup("apps/v1", "deployments"),
			func(t *testing.T) (runtime.Object, runtime.Object) {
				old := &appsv1.Deployment{}
				mustUnmarshal(t, readGolden(t, "objects/deployment-get.json"), old)
				d := old.DeepCopy()
				d.Spec.Selector.MatchLabels["extra"] = "x"
				d.Spec.Template.Labels["extra"] = "x"
				return d, old
			}, "golden-deploy"},
		{"configmap too long", "errors/422-configmap-data-too-long.json", reg.Lookup("v1", "configmaps"),
			func(t *testing.T) (runtime.Object, runtime.Object) {
				return &corev1.ConfigMap{Data: map[string]string{"big": strings.Repeat("x", 1<<20+1)}}, nil
			}, "golden-toolong"},
		{"invalid deployment", "errors/422-post-invalid-deployment.json", reg.Lookup("apps/v1", "deployments"),
			func(t *testing.T) (runtime.Object, runtime.Object) {
				d := &appsv1.Deployment{}
				mustUnmarshal(t, readGolden(t, "errors/422-post-invalid-deployment.req.json"), d)
				prepareDeployment(d) // the deployment defaults
				return d, nil
			}, "golden-bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, old := tt.obj(t)
			errs := tt.res.Validate(obj, old)
			st := apierrors.NewInvalid(tt.res.GVK().GroupKind(), tt.objName, errs).ErrStatus
			st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
			got, _ := json.Marshal(st)
			var want metav1.Status
			mustUnmarshal(t, readGolden(t, tt.status), &want)
			wb, _ := json.Marshal(want)
			if string(got) != string(wb) {
				t.Errorf("\n got: %s\nwant: %s", got, wb)
			}
		})
	}
}

// validateCase is one case of TestValidate: the causes Validate gives
// for obj (and old, on update), as "field: type", in order.
type validateCase struct {
	name     string
	gv, res  string
	obj, old func(t *testing.T) runtime.Object
	want     []string
}

// goldenObject decodes a golden object of type T.
func goldenObject[T any, PT interface {
	*T
	runtime.Object
}](t *testing.T, file string) PT {
	t.Helper()
	obj := PT(new(T))
	mustUnmarshal(t, readGolden(t, file), obj)
	return obj
}

// TestValidate covers the rules of each kind beyond the golden 422s:
// every case names the causes it expects ("field: type"), in order.
func TestValidate(t *testing.T) {
	reg := New(Builtin())
	sts := func(t *testing.T) *appsv1.StatefulSet {
		return goldenObject[appsv1.StatefulSet](t, "objects/statefulset-post.json")
	}
	ds := func(t *testing.T) *appsv1.DaemonSet {
		return goldenObject[appsv1.DaemonSet](t, "objects/daemonset-post.json")
	}
	job := func(t *testing.T) *batchv1.Job { return goldenObject[batchv1.Job](t, "objects/job-post.json") }
	cj := func(t *testing.T) *batchv1.CronJob {
		return goldenObject[batchv1.CronJob](t, "objects/cronjob-post.json")
	}
	pvc := func(t *testing.T) *corev1.PersistentVolumeClaim {
		return goldenObject[corev1.PersistentVolumeClaim](t, "objects/pvc-post.json")
	}
	svc := func(t *testing.T) *corev1.Service {
		return goldenObject[corev1.Service](t, "objects/service-post.json")
	}
	tests := []validateCase{
		{name: "statefulset selector immutable", gv: "apps/v1", res: "statefulsets",
			obj: func(t *testing.T) runtime.Object {
				s := sts(t)
				s.Spec.Selector.MatchLabels["x"] = "y"
				s.Spec.Template.Labels["x"] = "y"
				return s
			}, old: func(t *testing.T) runtime.Object { return sts(t) },
			want: []string{"spec.selector: Invalid value"}},
		{name: "statefulset service name immutable", gv: "apps/v1", res: "statefulsets",
			obj: func(t *testing.T) runtime.Object {
				s := sts(t)
				s.Spec.ServiceName = "other"
				return s
			}, old: func(t *testing.T) runtime.Object { return sts(t) },
			want: []string{"spec.serviceName: Invalid value"}},
		{name: "statefulset name not a DNS label", gv: "apps/v1", res: "statefulsets",
			obj: func(t *testing.T) runtime.Object {
				s := sts(t)
				s.Name = "a.b"
				return s
			}, want: []string{"metadata.name: Invalid value"}},
		{name: "statefulset without containers or selector", gv: "apps/v1", res: "statefulsets",
			obj: func(t *testing.T) runtime.Object {
				s := sts(t)
				s.Spec.Selector = nil
				s.Spec.Template.Spec.Containers = nil
				return s
			}, want: []string{"spec.selector: Required value", "spec.template.metadata.labels: Invalid value",
				"spec.template.spec.containers: Required value"}},
		{name: "daemonset selector immutable", gv: "apps/v1", res: "daemonsets",
			obj: func(t *testing.T) runtime.Object {
				d := ds(t)
				d.Spec.Selector.MatchLabels["x"] = "y"
				d.Spec.Template.Labels["x"] = "y"
				return d
			}, old: func(t *testing.T) runtime.Object { return ds(t) },
			want: []string{"spec.selector: Invalid value"}},
		{name: "daemonset restart policy", gv: "apps/v1", res: "daemonsets",
			obj: func(t *testing.T) runtime.Object {
				d := ds(t)
				d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
				return d
			}, want: []string{"spec.template.spec.restartPolicy: Unsupported value"}},
		{name: "replicaset selector mismatch", gv: "apps/v1", res: "replicasets",
			obj: func(t *testing.T) runtime.Object {
				rs := goldenObject[appsv1.ReplicaSet](t, "objects/replicaset-get.json")
				rs.Spec.Template.Labels = map[string]string{"other": "1"}
				return rs
			}, want: []string{"spec.template.metadata.labels: Invalid value"}},
		{name: "controllerrevision data immutable", gv: "apps/v1", res: "controllerrevisions",
			obj: func(t *testing.T) runtime.Object {
				return &appsv1.ControllerRevision{Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{"a":2}`)}}
			}, old: func(t *testing.T) runtime.Object {
				return &appsv1.ControllerRevision{Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{"a":1}`)}}
			}, want: []string{"data: Invalid value"}},
		{name: "controllerrevision without data", gv: "apps/v1", res: "controllerrevisions",
			obj:  func(t *testing.T) runtime.Object { return &appsv1.ControllerRevision{Revision: -1} },
			want: []string{"revision: Invalid value", "data: Required value"}},
		{name: "job template immutable", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.Template.Spec.Containers[0].Image = "other"
				return j
			}, old: func(t *testing.T) runtime.Object { return job(t) },
			want: []string{"spec.template: Invalid value"}},
		{name: "suspended job may change its node selector", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.Suspend = new(bool)
				*j.Spec.Suspend = true
				j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "b"}
				return j
			}, old: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.Suspend = new(bool)
				*j.Spec.Suspend = true
				return j
			}},
		{name: "job selector and completions immutable", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.Completions = new(int32)
				*j.Spec.Completions = 3
				j.Spec.Selector.MatchLabels["x"] = "y"
				j.Spec.Template.Labels["x"] = "y"
				return j
			}, old: func(t *testing.T) runtime.Object { return job(t) },
			want: []string{"spec.completions: Invalid value", "spec.selector: Invalid value", "spec.template: Invalid value"}},
		{name: "job success policy needs Indexed", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
				j.Spec.MaxFailedIndexes = ptr.To[int32](1)
				return j
			}, want: []string{"spec.backoffLimitPerIndex: Required value", "spec.maxFailedIndexes: Invalid value",
				"spec.successPolicy: Invalid value"}},
		{name: "job success policy rules", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
				j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](5), ptr.To[int32](5)
				j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
					{SucceededIndexes: ptr.To("0-2,4"), SucceededCount: ptr.To[int32](4)},
					{},
					{SucceededIndexes: ptr.To("3,1")},
					{SucceededIndexes: ptr.To("0-5")},
					{SucceededIndexes: ptr.To("0,1"), SucceededCount: ptr.To[int32](3)},
					{SucceededCount: ptr.To[int32](6)},
				}}
				return j
			}, want: []string{"spec.successPolicy.rules[1]: Required value", "spec.successPolicy.rules[2].succeededIndexes: Invalid value",
				"spec.successPolicy.rules[3].succeededIndexes: Invalid value", "spec.successPolicy.rules[4].succeededCount: Invalid value",
				"spec.successPolicy.rules[5].succeededCount: Invalid value"}},
		{name: "job success policy without rules, immutable", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
				j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{}
				return j
			}, old: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
				return j
			}, want: []string{"spec.successPolicy.rules: Required value", "spec.successPolicy: Invalid value"}},
		{name: "job pod failure policy", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
					{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						ContainerName: ptr.To("nope"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{2, 0, 2}}},
					{Action: "Retry", OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: "True"}}},
					{Action: batchv1.PodFailurePolicyActionIgnore},
				}}
				return j
			}, want: []string{"spec.podFailurePolicy.rules[0].action: Invalid value",
				"spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value",
				"spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value",
				"spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value",
				"spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value",
				"spec.podFailurePolicy.rules[1].action: Unsupported value",
				"spec.podFailurePolicy.rules[2]: Invalid value"}},
		{name: "job that restarts Always", gv: "batch/v1", res: "jobs",
			obj: func(t *testing.T) runtime.Object {
				j := job(t)
				j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
				return j
			}, want: []string{"spec.template.spec.restartPolicy: Required value"}},
		{name: "cronjob bad schedule and time zone", gv: "batch/v1", res: "cronjobs",
			obj: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "61 * * * *"
				tz := "Mars/Olympus"
				c.Spec.TimeZone = &tz
				return c
			}, want: []string{"spec.schedule: Invalid value", "spec.timeZone: Invalid value"}},
		{name: "cronjob schedule with four fields", gv: "batch/v1", res: "cronjobs",
			obj: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "0 0 1 1"
				return c
			}, want: []string{"spec.schedule: Invalid value"}},
		{name: "cronjob TZ alone", gv: "batch/v1", res: "cronjobs",
			obj: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "TZ=UTC"
				return c
			}, want: []string{"spec.schedule: Invalid value", "spec.schedule: Invalid value"}}, // unparseable; TZ in a new schedule
		{name: "cronjob keeps its TZ but may not add timeZone", gv: "batch/v1", res: "cronjobs",
			obj: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "TZ=UTC 0 * * * *"
				tz := "UTC"
				c.Spec.TimeZone = &tz
				return c
			}, old: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "TZ=UTC 0 * * * *"
				return c
			}, want: []string{"spec.schedule: Invalid value"}}, // both TZ and timeZone
		{name: "cronjob keeps its TZ", gv: "batch/v1", res: "cronjobs",
			obj: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "CRON_TZ=UTC 5 * * * *"
				return c
			}, old: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "TZ=UTC 0 * * * *"
				return c
			}},
		{name: "cronjob descriptors", gv: "batch/v1", res: "cronjobs",
			obj: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "@every 1h30m"
				return c
			}},
		{name: "cronjob ranges, steps, names", gv: "batch/v1", res: "cronjobs",
			obj: func(t *testing.T) runtime.Object {
				c := cj(t)
				c.Spec.Schedule = "*/15 9-17 ? JAN-jun,dec mon-FRI"
				return c
			}},
		{name: "pvc spec immutable", gv: "v1", res: "persistentvolumeclaims",
			obj: func(t *testing.T) runtime.Object {
				p := pvc(t)
				p.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
				return p
			}, old: func(t *testing.T) runtime.Object { return pvc(t) },
			want: []string{"spec: Forbidden"}},
		{name: "pvc may grow and be bound", gv: "v1", res: "persistentvolumeclaims",
			obj: func(t *testing.T) runtime.Object {
				p := pvc(t)
				p.Spec.Resources.Requests[corev1.ResourceStorage] = apiresource.MustParse("2Gi")
				p.Spec.VolumeName = "pv-1"
				return p
			}, old: func(t *testing.T) runtime.Object { return pvc(t) }},
		{name: "pvc shrink below capacity", gv: "v1", res: "persistentvolumeclaims",
			obj: func(t *testing.T) runtime.Object {
				p := pvc(t)
				p.Spec.Resources.Requests[corev1.ResourceStorage] = apiresource.MustParse("512Mi")
				return p
			}, old: func(t *testing.T) runtime.Object {
				p := pvc(t)
				p.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: apiresource.MustParse("1Gi")}
				return p
			}, want: []string{"spec.resources.requests.storage: Forbidden"}},
		{name: "pvc without access modes or size", gv: "v1", res: "persistentvolumeclaims",
			obj: func(t *testing.T) runtime.Object {
				p := pvc(t)
				p.Spec.AccessModes = nil
				p.Spec.Resources.Requests = nil
				return p
			}, want: []string{"spec.accessModes: Required value", "spec.resources[storage]: Required value"}},
		{name: "persistentvolume without capacity", gv: "v1", res: "persistentvolumes",
			obj:  func(t *testing.T) runtime.Object { return &corev1.PersistentVolume{} },
			want: []string{"spec.accessModes: Required value", "spec.capacity: Required value"}},
		{name: "service cluster IP immutable", gv: "v1", res: "services",
			obj: func(t *testing.T) runtime.Object {
				s := svc(t)
				s.Spec.ClusterIPs = []string{"10.96.0.99"}
				return s
			}, old: func(t *testing.T) runtime.Object { return svc(t) },
			want: []string{"spec.clusterIPs[0]: Invalid value"}},
		{name: "service update without cluster IP", gv: "v1", res: "services",
			obj: func(t *testing.T) runtime.Object {
				s := svc(t)
				s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
				return s
			}, old: func(t *testing.T) runtime.Object { return svc(t) }},
		{name: "service to ExternalName", gv: "v1", res: "services",
			obj: func(t *testing.T) runtime.Object {
				s := svc(t)
				s.Spec.Type = corev1.ServiceTypeExternalName
				s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
				s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = nil, nil
				return s
			}, old: func(t *testing.T) runtime.Object { return svc(t) }},
		{name: "ExternalName service with cluster IPs", gv: "v1", res: "services",
			obj: func(t *testing.T) runtime.Object {
				s := svc(t)
				s.Spec.Type = corev1.ServiceTypeExternalName
				s.Spec.ClusterIPs = []string{"10.96.0.99"}
				return s
			}, old: func(t *testing.T) runtime.Object { return svc(t) },
			want: []string{"spec.clusterIPs: Forbidden", "spec.ipFamilies: Forbidden", "spec.ipFamilyPolicy: Forbidden"}},
		{name: "immutable secret", gv: "v1", res: "secrets",
			obj: func(t *testing.T) runtime.Object {
				return &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"a": []byte("2")}}
			}, old: func(t *testing.T) runtime.Object {
				yes := true
				return &corev1.Secret{Immutable: &yes, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": []byte("1")}}
			}, want: []string{"type: Invalid value", "immutable: Forbidden", "data: Forbidden",
				"data[tls.crt]: Required value", "data[tls.key]: Required value"}},
		{name: "configmap keys", gv: "v1", res: "configmaps",
			obj: func(t *testing.T) runtime.Object {
				return &corev1.ConfigMap{Data: map[string]string{"a b": "1", "c": "2"}, BinaryData: map[string][]byte{"c": nil}}
			}, want: []string{"data[a b]: Invalid value", "data[c]: Invalid value"}},
		{name: "configmap too long", gv: "v1", res: "configmaps",
			obj: func(t *testing.T) runtime.Object {
				return &corev1.ConfigMap{Data: map[string]string{"big": strings.Repeat("x", 1<<20+1)}}
			}, want: []string{"[]: Too long"}},
		{name: "replicationcontroller template mismatch", gv: "v1", res: "replicationcontrollers",
			obj: func(t *testing.T) runtime.Object {
				rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"a": "1"},
					Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "2"}},
						Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways,
							Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
				return rc
			}, want: []string{"spec.template.metadata.labels: Invalid value"}},
		{name: "podtemplate duplicate containers", gv: "v1", res: "podtemplates",
			obj: func(t *testing.T) runtime.Object {
				return &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways,
					Containers: []corev1.Container{{Name: "c", Image: "i"}, {Name: "c"}}}}}
			}, want: []string{"template.spec.containers[1].image: Required value", "template.spec.containers[1].name: Duplicate value"}},
	}
	tests = append(tests, otherGroupValidateCases()...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reg.Lookup(tt.gv, tt.res)
			var old runtime.Object
			if tt.old != nil {
				old = tt.old(t)
			}
			errs := r.Validate(tt.obj(t), old)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field+": "+e.Type.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("causes\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(tt.want, "\n"), errs)
			}
		})
	}
}
