package deployment_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/controllers/workload/workloadtest"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// env is one namespace of a cluster, its kubelet and its watches.
type env struct {
	c       *membertest.Cluster
	member  int // the member the test talks to
	cs      kubernetes.Interface
	ns      string
	kubelet *workloadtest.Kubelet
	rec     *workloadtest.Recorder
}

func newEnv(t *testing.T, c *membertest.Cluster, member int, ns string) *env {
	t.Helper()
	cs := c.Clientset(member)
	workloadtest.Namespace(t, cs, ns)
	e := &env{c: c, member: member, cs: cs, ns: ns}
	e.rec = workloadtest.Record(t,
		func(o metav1.ListOptions) (watch.Interface, error) { return cs.CoreV1().Pods(ns).Watch(t.Context(), o) },
		func(o metav1.ListOptions) (watch.Interface, error) {
			return cs.AppsV1().ReplicaSets(ns).Watch(t.Context(), o)
		})
	e.kubelet = workloadtest.StartKubelet(t, cs, ns, workloadtest.Run)
	return e
}

func newDeployment(name string, replicas int32, image string, strategy appsv1.DeploymentStrategy) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Strategy: strategy,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
}

func rolling(surge, unavailable int32) appsv1.DeploymentStrategy {
	s, u := intstr.FromInt32(surge), intstr.FromInt32(unavailable)
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &s, MaxUnavailable: &u}}
}

func (e *env) create(t *testing.T, d *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	out, err := e.cs.AppsV1().Deployments(e.ns).Create(t.Context(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setImage changes the template's image (a new revision).
func (e *env) setImage(t *testing.T, name, image string) {
	t.Helper()
	membertest.Eventually(t, 10*time.Second, func() error {
		d, err := e.cs.AppsV1().Deployments(e.ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		_, err = e.cs.AppsV1().Deployments(e.ns).Update(t.Context(), d, metav1.UpdateOptions{})
		return err
	})
}

// rolloutStatus is kubectl rollout status's verdict on d (its
// DeploymentStatusViewer): nil once rolled out.
func rolloutStatus(d *appsv1.Deployment) error {
	if d.Generation > d.Status.ObservedGeneration {
		return errors.New("waiting for deployment spec update to be observed")
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
		}
	}
	st := d.Status
	switch {
	case d.Spec.Replicas != nil && st.UpdatedReplicas < *d.Spec.Replicas:
		return fmt.Errorf("%d out of %d new replicas have been updated", st.UpdatedReplicas, *d.Spec.Replicas)
	case st.Replicas > st.UpdatedReplicas:
		return fmt.Errorf("%d old replicas are pending termination", st.Replicas-st.UpdatedReplicas)
	case st.AvailableReplicas < st.UpdatedReplicas:
		return fmt.Errorf("%d of %d updated replicas are available", st.AvailableReplicas, st.UpdatedReplicas)
	}
	return nil
}

// waitRolledOut waits until kubectl would call d rolled out and its
// conditions say so, and returns it.
func (e *env) waitRolledOut(t *testing.T, name string, timeout time.Duration) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	membertest.Eventually(t, timeout, func() (err error) {
		if d, err = e.cs.AppsV1().Deployments(e.ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if err := rolloutStatus(d); err != nil {
			return err
		}
		if r := d.Spec.Replicas; d.Status.Replicas != *r || d.Status.ReadyReplicas != *r || d.Status.UnavailableReplicas != 0 {
			return fmt.Errorf("status %+v", d.Status)
		}
		for typ, reason := range map[appsv1.DeploymentConditionType]string{
			appsv1.DeploymentAvailable: "MinimumReplicasAvailable", appsv1.DeploymentProgressing: "NewReplicaSetAvailable"} {
			if c := cond(d, typ); c == nil || c.Status != corev1.ConditionTrue || c.Reason != reason {
				return fmt.Errorf("condition %s is %+v, want True/%s", typ, c, reason)
			}
		}
		return nil
	})
	return d
}

func cond(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// replicaSets returns d's ReplicaSets by name.
func (e *env) replicaSets(t *testing.T, d *appsv1.Deployment) map[string]*appsv1.ReplicaSet {
	t.Helper()
	l, err := e.cs.AppsV1().ReplicaSets(e.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*appsv1.ReplicaSet{}
	for i := range l.Items {
		if ref := metav1.GetControllerOf(&l.Items[i]); ref != nil && ref.UID == d.UID {
			out[l.Items[i].Name] = &l.Items[i]
		}
	}
	return out
}

// maxLivePods is the most pods of prefix that existed (not being deleted)
// at once, by the recorded events.
func (e *env) maxLivePods(prefix string) (most int) {
	live := map[string]bool{}
	for _, ev := range e.rec.Events() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || !strings.HasPrefix(p.Name, prefix) {
			continue
		}
		if ev.Type == watch.Deleted || p.DeletionTimestamp != nil {
			delete(live, p.Name)
		} else {
			live[p.Name] = true
		}
		most = max(most, len(live))
	}
	return most
}

// rsCreated counts the ReplicaSets of prefix created, by pod-template-hash.
func (e *env) rsCreated(prefix string) map[string]int {
	out := map[string]int{}
	for _, ev := range e.rec.Events() {
		if rs, ok := ev.Object.(*appsv1.ReplicaSet); ok && ev.Type == watch.Added && strings.HasPrefix(rs.Name, prefix) {
			out[rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]]++
		}
	}
	return out
}

// kubectl runs kubectl against the test's member; it skips the test when
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
