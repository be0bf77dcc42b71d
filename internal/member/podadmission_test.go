package member_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// What kube's scheme defaults and pod admission plugins (ServiceAccount,
// DefaultTolerationSeconds, Priority) write into pods, through client-go
// on a real member: what a stock kubelet needs to mount volumes and
// reach the API.

func admissionPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1"}}}}
}

// waitDefaultSA waits for the namespace's default ServiceAccount (its
// controller creates it).
func waitDefaultSA(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	membertest.Eventually(t, 10*time.Second, func() error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(t.Context(), "default", metav1.GetOptions{})
		return err
	})
}

func TestPodDefaultsAndAdmission(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cs := c.PlainClientset(0)
	const ns = "adm"
	createNamespace(t, cs, ns)
	waitDefaultSA(t, cs, ns)
	ctx := t.Context()

	t.Run("defaults and token volume", func(t *testing.T) {
		p := admissionPod("full")
		p.Spec.Volumes = []corev1.Volume{
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "x"},
				Items:                []corev1.KeyToPath{{Key: "k", Path: "p", Mode: ptr.To[int32](0o600)}}}}},
			{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
			{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
				Items: []corev1.DownwardAPIVolumeFile{{Path: "n", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
			{Name: "empty"},
		}
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1"}}
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
		p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}}
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("64Mi")}
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sp := got.Spec
		vols := map[string]corev1.Volume{}
		for _, v := range sp.Volumes {
			vols[v.Name] = v
		}
		if m := vols["cm"].ConfigMap.DefaultMode; m == nil || *m != 420 {
			t.Errorf("configMap defaultMode %v, want 420", m)
		}
		if m := vols["cm"].ConfigMap.Items[0].Mode; m == nil || *m != 0o600 {
			t.Errorf("configMap item mode %v, want 0600 kept", m)
		}
		if m := vols["sec"].Secret.DefaultMode; m == nil || *m != 420 {
			t.Errorf("secret defaultMode %v, want 420", m)
		}
		if d := vols["dapi"].DownwardAPI; *d.DefaultMode != 420 || d.Items[0].FieldRef.APIVersion != "v1" {
			t.Errorf("downwardAPI %+v, want defaultMode 420 and fieldRef v1", d)
		}
		if vols["empty"].EmptyDir == nil {
			t.Errorf("a volume without a source is %+v, want an emptyDir", vols["empty"])
		}
		if fr := sp.Containers[0].Env[0].ValueFrom.FieldRef; fr.APIVersion != "v1" {
			t.Errorf("env fieldRef apiVersion %q, want v1", fr.APIVersion)
		}
		if pr := sp.Containers[0].ReadinessProbe; pr.TimeoutSeconds != 1 || pr.PeriodSeconds != 10 ||
			pr.SuccessThreshold != 1 || pr.FailureThreshold != 3 || pr.HTTPGet.Path != "/" || pr.HTTPGet.Scheme != "HTTP" {
			t.Errorf("probe %+v, want kube's defaults", pr)
		}
		if r := sp.Containers[0].Resources.Requests; r.Cpu().String() != "100m" || r.Memory().String() != "64Mi" {
			t.Errorf("requests %v, want the limits", r)
		}
		if got.Status.QOSClass != corev1.PodQOSBurstable { // the init container has no resources
			t.Errorf("qosClass %q, want Burstable", got.Status.QOSClass)
		}
		if sp.ServiceAccountName != "default" || sp.DeprecatedServiceAccount != "default" {
			t.Errorf("serviceAccountName %q serviceAccount %q, want default", sp.ServiceAccountName, sp.DeprecatedServiceAccount)
		}
		var token *corev1.Volume
		for i, v := range sp.Volumes {
			if strings.HasPrefix(v.Name, "kube-api-access-") {
				token = &sp.Volumes[i]
			}
		}
		if token == nil || len(token.Name) != len("kube-api-access-")+5 {
			t.Fatalf("volumes %+v: no kube-api-access-xxxxx volume", sp.Volumes)
		}
		want := &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](420), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}
		if !apiequality.Semantic.DeepEqual(token.Projected, want) {
			t.Errorf("token volume %+v, want %+v", token.Projected, want)
		}
		mount := corev1.VolumeMount{Name: token.Name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}
		for _, ctr := range append(sp.InitContainers, sp.Containers...) {
			if n := len(ctr.VolumeMounts); n == 0 || !apiequality.Semantic.DeepEqual(ctr.VolumeMounts[n-1], mount) {
				t.Errorf("container %s mounts %+v, want %+v last", ctr.Name, ctr.VolumeMounts, mount)
			}
		}
		wantTol := []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](300)},
			{Key: "node.kubernetes.io/unreachable", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](300)},
		}
		if !apiequality.Semantic.DeepEqual(sp.Tolerations, wantTol) {
			t.Errorf("tolerations %+v, want %+v", sp.Tolerations, wantTol)
		}
		if sp.Priority == nil || *sp.Priority != 0 || sp.PreemptionPolicy == nil || *sp.PreemptionPolicy != corev1.PreemptLowerPriority {
			t.Errorf("priority %v preemptionPolicy %v, want 0 and PreemptLowerPriority", sp.Priority, sp.PreemptionPolicy)
		}
		// An update without the admission fields keeps them (read again on
		// a conflict: the leader's controllers may have written the pod).
		var upd *corev1.Pod
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cs.CoreV1().Pods(ns).Get(ctx, got.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.Tolerations, cur.Spec.Priority, cur.Spec.PreemptionPolicy = nil, nil, nil
			cur.Labels = map[string]string{"updated": "yes"}
			upd, err = cs.CoreV1().Pods(ns).Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(upd.Spec.Tolerations) != 2 || upd.Spec.Priority == nil || upd.Spec.PreemptionPolicy == nil {
			t.Errorf("after update: tolerations %v priority %v preemptionPolicy %v", upd.Spec.Tolerations, upd.Spec.Priority, upd.Spec.PreemptionPolicy)
		}
	})

	t.Run("no automount, own tolerations", func(t *testing.T) {
		p := admissionPod("noauto")
		p.Spec.AutomountServiceAccountToken = ptr.To(false)
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Volumes) != 0 || len(got.Spec.Containers[0].VolumeMounts) != 0 {
			t.Errorf("automount false: volumes %+v mounts %+v", got.Spec.Volumes, got.Spec.Containers[0].VolumeMounts)
		}
		if got.Status.QOSClass != corev1.PodQOSBestEffort {
			t.Errorf("qosClass %q, want BestEffort", got.Status.QOSClass)
		}
		if len(got.Spec.Tolerations) != 1 {
			t.Errorf("a pod tolerating everything got %+v", got.Spec.Tolerations)
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "quiet"}, AutomountServiceAccountToken: ptr.To(false),
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p = admissionPod("quiet")
		p.Spec.ServiceAccountName = "quiet"
		if got, err = cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Volumes) != 0 || got.Spec.DeprecatedServiceAccount != "quiet" {
			t.Errorf("account without automount: volumes %+v serviceAccount %q", got.Spec.Volumes, got.Spec.DeprecatedServiceAccount)
		}
		if len(got.Spec.ImagePullSecrets) != 1 || got.Spec.ImagePullSecrets[0].Name != "pull" {
			t.Errorf("imagePullSecrets %+v, want the account's", got.Spec.ImagePullSecrets)
		}
	})

	t.Run("missing service account", func(t *testing.T) {
		p := admissionPod("nosa")
		p.Spec.ServiceAccountName = "missing"
		_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		const msg = `pods "nosa" is forbidden: error looking up service account adm/missing: serviceaccount "missing" not found`
		if !apierrors.IsForbidden(err) || err.Error() != msg {
			t.Errorf("got %v, want 403 %q", err, msg)
		}
		if _, err := cs.CoreV1().Pods(ns).Get(ctx, "nosa", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("refused pod stored: %v", err)
		}
	})

	t.Run("priority", func(t *testing.T) {
		pc, err := cs.SchedulingV1().PriorityClasses().Get(ctx, "system-node-critical", metav1.GetOptions{})
		if err != nil || pc.Value != 2000001000 {
			t.Fatalf("system-node-critical: %v %v", pc, err)
		}
		if pc, err := cs.SchedulingV1().PriorityClasses().Get(ctx, "system-cluster-critical", metav1.GetOptions{}); err != nil || pc.Value != 2000000000 {
			t.Fatalf("system-cluster-critical: %v %v", pc, err)
		}
		p := admissionPod("critical")
		p.Spec.PriorityClassName = "system-node-critical"
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil || *got.Spec.Priority != 2000001000 {
			t.Fatalf("critical pod: %v %v", got, err)
		}
		p = admissionPod("unknown")
		p.Spec.PriorityClassName = "nope"
		_, err = cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if msg := `pods "unknown" is forbidden: no PriorityClass with name nope was found`; !apierrors.IsForbidden(err) || err.Error() != msg {
			t.Errorf("unknown class: got %v, want 403 %q", err, msg)
		}
		p = admissionPod("explicit")
		p.Spec.PriorityClassName = "system-node-critical"
		p.Spec.Priority = ptr.To[int32](5)
		_, err = cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "the integer value of priority (5) must not be provided in pod spec") {
			t.Errorf("explicit priority: %v", err)
		}
		never := corev1.PreemptNever
		def := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "house"}, Value: 1000, GlobalDefault: true, PreemptionPolicy: &never}
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, def, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err = cs.CoreV1().Pods(ns).Create(ctx, admissionPod("defaulted"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.PriorityClassName != "house" || *got.Spec.Priority != 1000 || *got.Spec.PreemptionPolicy != never {
			t.Errorf("with a default class: %q %v %v", got.Spec.PriorityClassName, *got.Spec.Priority, *got.Spec.PreemptionPolicy)
		}
		second := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "second"}, Value: 5, GlobalDefault: true}
		_, err = cs.SchedulingV1().PriorityClasses().Create(ctx, second, metav1.CreateOptions{})
		if msg := `priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass house is already marked as default. Only one default can exist`; !apierrors.IsForbidden(err) || err.Error() != msg {
			t.Errorf("a second default class: %v, want 403 %q", err, msg)
		}
		bad := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical2"}, Value: 1}
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("unknown system- class: %v, want 422", err)
		}
	})

	t.Run("runtime class", func(t *testing.T) {
		rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "kata"}, Handler: "kata",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{"cpu": resource.MustParse("250m")}},
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"sandbox": "kata"},
				Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}}
		if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := admissionPod("sandboxed")
		p.Spec.RuntimeClassName = ptr.To("kata")
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if q := got.Spec.Overhead["cpu"]; q.String() != "250m" || got.Spec.NodeSelector["sandbox"] != "kata" ||
			!slices.ContainsFunc(got.Spec.Tolerations, func(t corev1.Toleration) bool { return t.Key == "sandbox" }) {
			t.Errorf("pod of RuntimeClass kata: overhead %v nodeSelector %v tolerations %v", got.Spec.Overhead,
				got.Spec.NodeSelector, got.Spec.Tolerations)
		}
		for _, c := range []struct {
			name string
			edit func(*corev1.Pod)
			msg  string
		}{
			{"missing", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr.To("gvisor") },
				`pods "rc-bad" is forbidden: pod rejected: RuntimeClass "gvisor" not found`},
			{"other overhead", func(p *corev1.Pod) {
				p.Spec.RuntimeClassName = ptr.To("kata")
				p.Spec.Overhead = corev1.ResourceList{"cpu": resource.MustParse("1")}
			}, `pods "rc-bad" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
			{"overhead without class", func(p *corev1.Pod) { p.Spec.Overhead = corev1.ResourceList{"cpu": resource.MustParse("1")} },
				`pods "rc-bad" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
			{"conflicting selector", func(p *corev1.Pod) {
				p.Spec.RuntimeClassName = ptr.To("kata")
				p.Spec.NodeSelector = map[string]string{"sandbox": "runc"}
			}, `pods "rc-bad" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = kata; pod.spec.nodeSelector[sandbox] = runc`},
		} {
			p := admissionPod("rc-bad")
			c.edit(p)
			_, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if !apierrors.IsForbidden(err) || err.Error() != c.msg {
				t.Errorf("%s: %v, want 403 %q", c.name, err, c.msg)
			}
		}
	})

	t.Run("deployment template and its pods", func(t *testing.T) {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1"}},
					Volumes: []corev1.Volume{{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}}}}}}
		got, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ts := got.Spec.Template.Spec
		if m := ts.Volumes[0].ConfigMap.DefaultMode; m == nil || *m != 420 {
			t.Errorf("template configMap defaultMode %v, want 420", m)
		}
		if len(ts.Volumes) != 1 || len(ts.Tolerations) != 0 || ts.Priority != nil || ts.ServiceAccountName != "" {
			t.Errorf("a template got admission fields: %+v", ts)
		}
		membertest.Eventually(t, 15*time.Second, func() error {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil || len(pods.Items) == 0 {
				return fmt.Errorf("no pod of the deployment yet (%v)", err)
			}
			sp := pods.Items[0].Spec
			if len(sp.Volumes) != 2 || !strings.HasPrefix(sp.Volumes[1].Name, "kube-api-access-") || *sp.Volumes[0].ConfigMap.DefaultMode != 420 {
				return fmt.Errorf("controller's pod volumes %+v", sp.Volumes)
			}
			if len(sp.Tolerations) != 2 || sp.Priority == nil {
				return fmt.Errorf("controller's pod tolerations %+v priority %v", sp.Tolerations, sp.Priority)
			}
			return nil
		})
	})
}
