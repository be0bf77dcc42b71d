package statefulset_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/controllers/workload/workloadtest"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// simulated runs two simulated nodes (they play the kubelet: bound pods
// become Running and Ready, deleted pods go at once unless a finalizer
// holds them).
func simulated(cfg *member.Config) {
	s := &cfg.Controllers.Scheduling
	s.SimNodes.Count = 2
	s.SimNodes.LeaseInterval = 300 * time.Millisecond
	s.SimNodes.LeaseDuration = 2 * time.Second
}

// env is one namespace of the cluster and the pod events recorded in it.
type env struct {
	c      *membertest.Cluster
	member int
	cs     kubernetes.Interface
	ns     string
	rec    *workloadtest.Recorder
}

func newEnv(t *testing.T, c *membertest.Cluster, member int, ns string) *env {
	t.Helper()
	cs := c.Clientset(member)
	workloadtest.Namespace(t, cs, ns)
	rec := workloadtest.Record(t, func(o metav1.ListOptions) (watch.Interface, error) {
		return cs.CoreV1().Pods(ns).Watch(t.Context(), o)
	})
	provision(t, cs, ns)
	return &env{c: c, member: member, cs: cs, ns: ns, rec: rec}
}

// provision plays an external provisioner for ns until the test ends: a
// Pending claim gets a volume pre-bound to it, which the PV binder binds
// (the scheduler places a pod only once its claims are bound).
func provision(t *testing.T, cs kubernetes.Interface, ns string) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			l, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for _, c := range l.Items {
				if c.Spec.VolumeName != "" || c.DeletionTimestamp != nil {
					continue
				}
				pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + string(c.UID)},
					Spec: corev1.PersistentVolumeSpec{Capacity: c.Spec.Resources.Requests, AccessModes: c.Spec.AccessModes,
						ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns,
							Name: c.Name, UID: c.UID},
						PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
							Path: "/tmp/" + string(c.UID)}}}}
				_, _ = cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}) // exists: done already
			}
		}
	}()
}

func statefulSet(name string, replicas int32, policy appsv1.PodManagementPolicyType) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, ServiceName: name + "-headless", PodManagementPolicy: policy,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}}
}

func (e *env) create(t *testing.T, set *appsv1.StatefulSet) *appsv1.StatefulSet {
	t.Helper()
	out, err := e.cs.AppsV1().StatefulSets(e.ns).Create(t.Context(), set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) patch(t *testing.T, name, patch string) {
	t.Helper()
	if _, err := e.cs.AppsV1().StatefulSets(e.ns).Patch(t.Context(), name, types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rolledOut is Helm's --wait verdict (pkg/kube/ready.go) and kubectl
// rollout status's on set: nil once every replica is ready and updated
// (up to the partition).
func rolledOut(set *appsv1.StatefulSet) error {
	st, n := set.Status, *set.Spec.Replicas
	partition := int32(0)
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = *ru.Partition
	}
	onDelete := set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType
	switch {
	case st.ObservedGeneration == 0 || set.Generation > st.ObservedGeneration:
		return fmt.Errorf("generation %d not observed (%d)", set.Generation, st.ObservedGeneration)
	case onDelete && st.ReadyReplicas != n: // Helm calls OnDelete sets ready at once; this waits for the pods
		return fmt.Errorf("%d of %d replicas ready", st.ReadyReplicas, n)
	case onDelete:
		return nil
	case st.UpdatedReplicas < n-partition:
		return fmt.Errorf("%d of %d replicas updated", st.UpdatedReplicas, n-partition)
	case st.ReadyReplicas != n:
		return fmt.Errorf("%d of %d replicas ready", st.ReadyReplicas, n)
	case partition == 0 && st.CurrentRevision != st.UpdateRevision:
		return fmt.Errorf("current revision %s, update revision %s", st.CurrentRevision, st.UpdateRevision)
	}
	return nil
}

// waitRolledOut waits until set name is rolled out with n pods that
// exist, and returns it and its pods by ordinal.
func (e *env) waitRolledOut(t *testing.T, name string, n int) (*appsv1.StatefulSet, []corev1.Pod) {
	t.Helper()
	var set *appsv1.StatefulSet
	var pods []corev1.Pod
	membertest.Eventually(t, 30*time.Second, func() (err error) {
		if set, err = e.cs.AppsV1().StatefulSets(e.ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if *set.Spec.Replicas != int32(n) {
			return fmt.Errorf("spec.replicas %d, want %d", *set.Spec.Replicas, n)
		}
		if err := rolledOut(set); err != nil {
			return err
		}
		st := set.Status
		rolling := set.Spec.UpdateStrategy.RollingUpdate
		complete := rolling != nil && (rolling.Partition == nil || *rolling.Partition == 0)
		if st.Replicas != int32(n) || st.AvailableReplicas != int32(n) || (complete && st.CurrentReplicas != int32(n)) {
			return fmt.Errorf("status %+v", st)
		}
		if pods, err = e.pods(t.Context(), set); err != nil {
			return err
		}
		if len(pods) != n {
			return fmt.Errorf("%d pods, want %d", len(pods), n)
		}
		for i, p := range pods {
			if want := fmt.Sprintf("%s-%d", name, i); p.Name != want || p.DeletionTimestamp != nil {
				return fmt.Errorf("pod %d is %s (deleting %v), want %s", i, p.Name, p.DeletionTimestamp != nil, want)
			}
		}
		return nil
	})
	return set, pods
}

// pods returns the pods set controls, by name.
func (e *env) pods(ctx context.Context, set *appsv1.StatefulSet) ([]corev1.Pod, error) {
	l, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == set.UID {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (e *env) claimNames(t *testing.T) []string {
	t.Helper()
	l, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range l.Items {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

// podEvents returns the recorded events of the pods of prefix as
// "ADDED web-0", "READY web-0", "DELETING web-0", "DELETED web-0", in
// order (each change of readiness or deletion once).
func (e *env) podEvents(prefix string) []string {
	var out []string
	ready, deleting := map[types.UID]bool{}, map[types.UID]bool{}
	for _, ev := range e.rec.Events() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || !strings.HasPrefix(p.Name, prefix) {
			continue
		}
		switch {
		case ev.Type == watch.Added:
			out = append(out, "ADDED "+p.Name)
		case ev.Type == watch.Deleted:
			out = append(out, "DELETED "+p.Name)
			continue
		}
		if r := isReady(p); r && !ready[p.UID] {
			ready[p.UID] = true
			out = append(out, "READY "+p.Name)
		}
		if p.DeletionTimestamp != nil && !deleting[p.UID] {
			deleting[p.UID] = true
			out = append(out, "DELETING "+p.Name)
		}
	}
	return out
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue && p.Status.Phase == corev1.PodRunning
		}
	}
	return false
}

// before reports whether a occurs in events, and before b (b may be
// missing).
func before(events []string, a, b string) bool {
	i, j := slices.Index(events, a), slices.Index(events, b)
	return i >= 0 && (j < 0 || i < j)
}

// kubectl runs kubectl against the env's member; it skips the test when
// there is no kubectl.
func (e *env) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	args = append([]string{"--kubeconfig", e.c.Kubeconfig(e.member), "-n", e.ns}, args...)
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
