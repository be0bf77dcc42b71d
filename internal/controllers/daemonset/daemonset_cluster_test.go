package daemonset_test

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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/litek8s/litek8s/internal/controllers/workload"
	"github.com/litek8s/litek8s/internal/controllers/workload/workloadtest"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// simulated runs n simulated nodes (the kubelets of the test) and
// collects the pods of deleted nodes quickly.
func simulated(n int) membertest.Option {
	return func(cfg *member.Config) {
		s := &cfg.Controllers.Scheduling
		s.SimNodes.Count = n
		s.SimNodes.LeaseInterval = 300 * time.Millisecond
		s.SimNodes.LeaseDuration = 2 * time.Second
		s.PodGC.CheckPeriod = 200 * time.Millisecond
		s.PodGC.Quarantine = 0
		s.Scheduler.BackoffBase = 50 * time.Millisecond
		s.Scheduler.BackoffMax = 500 * time.Millisecond
		cfg.Controllers.Workloads.DaemonSet.FailedPodBackoff = 100 * time.Millisecond
	}
}

type env struct {
	c      *membertest.Cluster
	cs     kubernetes.Interface
	ns     string
	member int
}

// The DaemonSet controller in a cluster of 3 with 3 simulated nodes,
// driven through a follower with client-go and kubectl.
func TestDaemonSet(t *testing.T) {
	c := membertest.StartCluster(t, 3, simulated(3))
	e := &env{c: c, member: c.Follower(), ns: "ds"}
	e.cs = c.Clientset(e.member)
	if _, err := e.cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 30*time.Second, func() error {
		l, err := e.cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: "type=simulated"})
		if err != nil {
			return err
		}
		if len(l.Items) != 3 {
			return fmt.Errorf("%d simulated nodes", len(l.Items))
		}
		for _, n := range l.Items {
			if len(n.Spec.Taints) != 0 {
				return fmt.Errorf("node %s tainted %v", n.Name, n.Spec.Taints)
			}
		}
		return nil
	})
	rec := workloadtest.Record(t, func(o metav1.ListOptions) (watch.Interface, error) {
		return e.cs.CoreV1().Pods(e.ns).Watch(t.Context(), o)
	})
	t.Run("placement", e.testPlacement)
	t.Run("nodes come and go", e.testNodes)
	t.Run("failed pod replaced", e.testFailed)
	t.Run("rolling update", func(t *testing.T) { e.testRollingUpdate(t, rec) })
	t.Run("rolling update with surge", func(t *testing.T) { e.testSurge(t, rec) })
	t.Run("on delete", e.testOnDelete)
	t.Run("leader change", e.testLeaderChange)
	c.SameObjects(t.Context(), "/apis/apps/v1/daemonsets", "/apis/apps/v1/controllerrevisions", "/api/v1/pods")
}

func daemonSet(name string, adjust ...func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	for _, a := range adjust {
		a(ds)
	}
	return ds
}

// podsByNode returns the running pods that ds controls, by node name
// (nodeName, "" while unbound).
func (e *env) podsByNode(ctx context.Context, uid types.UID) (map[string][]corev1.Pod, error) {
	l, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string][]corev1.Pod{}
	for _, p := range l.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid && workload.IsActive(&p) {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
		}
	}
	return out, nil
}

// waitOn waits until ds runs exactly one ready pod on each of nodes and
// none elsewhere, and its status counts them all up to date, for its
// current generation; it returns the pods by node.
func (e *env) waitOn(t *testing.T, name string, nodes ...string) (*appsv1.DaemonSet, map[string][]corev1.Pod) {
	t.Helper()
	var ds *appsv1.DaemonSet
	var pods map[string][]corev1.Pod
	n := int32(len(nodes))
	membertest.Eventually(t, 45*time.Second, func() (err error) {
		if ds, err = e.cs.AppsV1().DaemonSets(e.ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		st := ds.Status
		if st.ObservedGeneration != ds.Generation || st.DesiredNumberScheduled != n || st.CurrentNumberScheduled != n ||
			st.NumberReady != n || st.NumberAvailable != n || st.UpdatedNumberScheduled != n || st.NumberUnavailable != 0 ||
			st.NumberMisscheduled != 0 {
			return fmt.Errorf("daemonset %s: generation %d, status %+v, want %d nodes", name, ds.Generation, st, n)
		}
		if pods, err = e.podsByNode(t.Context(), ds.UID); err != nil {
			return err
		}
		got := slices.Sorted(func(yield func(string) bool) {
			for k := range pods {
				yield(k)
			}
		})
		if !slices.Equal(got, slices.Sorted(slices.Values(nodes))) {
			return fmt.Errorf("daemonset %s has pods on %v, want %v", name, got, nodes)
		}
		for node, ps := range pods {
			if len(ps) != 1 || !workload.IsReady(&ps[0]) {
				return fmt.Errorf("daemonset %s on %s: %d pods (first ready: %v)", name, node, len(ps), workload.IsReady(&ps[0]))
			}
		}
		return nil
	})
	return ds, pods
}

func (e *env) patchNode(t *testing.T, name, patch string) {
	t.Helper()
	if _, err := e.cs.CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testPlacement: a pod on every node but a tainted one, bound by the
// scheduler through a matchFields affinity, with the daemon tolerations
// and the revision's labels; a nodeSelector follows the node labels; a
// node untainted gets its pod.
func (e *env) testPlacement(t *testing.T) {
	e.patchNode(t, "sim-node-2", `{"spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}}`)
	ds, err := e.cs.AppsV1().DaemonSets(e.ns).Create(t.Context(), daemonSet("agent"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, pods := e.waitOn(t, "agent", "sim-node-0", "sim-node-1")
	revs, err := e.cs.AppsV1().ControllerRevisions(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	if len(revs.Items) != 1 || revs.Items[0].Revision != 1 || metav1.GetControllerOf(&revs.Items[0]).UID != ds.UID {
		t.Fatalf("controller revisions of agent: %+v", revs.Items)
	}
	hash := revs.Items[0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	if revs.Items[0].Name != "agent-"+hash {
		t.Errorf("revision %s, hash %q", revs.Items[0].Name, hash)
	}
	for node, ps := range pods {
		p := ps[0]
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" ||
			!slices.Equal(terms[0].MatchFields[0].Values, []string{node}) {
			t.Errorf("pod %s on %s: affinity %+v", p.Name, node, terms)
		}
		if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] != hash || p.Labels["pod-template-generation"] != "1" ||
			p.GenerateName != "agent-" {
			t.Errorf("pod %s: labels %v generateName %q", p.Name, p.Labels, p.GenerateName)
		}
		var keys []string
		for _, tol := range p.Spec.Tolerations {
			keys = append(keys, tol.Key+":"+string(tol.Effect))
		}
		for _, want := range []string{"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute",
			"node.kubernetes.io/disk-pressure:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule",
			"node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"} {
			if !slices.Contains(keys, want) {
				t.Errorf("pod %s tolerations %v lack %s", p.Name, keys, want)
			}
		}
	}
	// A nodeSelector: only the labelled node, and it follows the label.
	e.patchNode(t, "sim-node-0", `{"metadata":{"labels":{"role":"edge"}}}`)
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Create(t.Context(), daemonSet("edge", func(ds *appsv1.DaemonSet) {
		ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "edge"}
	}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitOn(t, "edge", "sim-node-0")
	e.patchNode(t, "sim-node-1", `{"metadata":{"labels":{"role":"edge"}}}`)
	e.patchNode(t, "sim-node-0", `{"metadata":{"labels":{"role":null}}}`)
	e.waitOn(t, "edge", "sim-node-1")
	// The taint lifted, the node gets agent's pod.
	e.patchNode(t, "sim-node-2", `{"spec":{"taints":null}}`)
	e.waitOn(t, "agent", "sim-node-0", "sim-node-1", "sim-node-2")
}

// testNodes: a node registered gets a pod (bound to it, not started:
// no kubelet runs it), and loses it when deleted; the status follows.
func (e *env) testNodes(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "extra", Labels: map[string]string{"kubernetes.io/hostname": "extra"}}}
	if _, err := e.cs.CoreV1().Nodes().Create(t.Context(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.cs.CoreV1().Nodes().Get(t.Context(), "extra", metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}
		n.Status.Capacity = n.Status.Allocatable
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = e.cs.CoreV1().Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := e.cs.AppsV1().DaemonSets(e.ns).Get(t.Context(), "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 30*time.Second, func() error {
		pods, err := e.podsByNode(t.Context(), ds.UID)
		if err != nil {
			return err
		}
		d, err := e.cs.AppsV1().DaemonSets(e.ns).Get(t.Context(), "agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(pods["extra"]) != 1 || d.Status.DesiredNumberScheduled != 4 || d.Status.CurrentNumberScheduled != 4 ||
			d.Status.NumberUnavailable != 1 {
			return fmt.Errorf("pods on extra %d, status %+v", len(pods["extra"]), d.Status)
		}
		return nil
	})
	if err := e.cs.CoreV1().Nodes().Delete(t.Context(), "extra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitOn(t, "agent", "sim-node-0", "sim-node-1", "sim-node-2")
}

// testFailed: a failed daemon pod is deleted and replaced on its node.
func (e *env) testFailed(t *testing.T) {
	_, pods := e.waitOn(t, "agent", "sim-node-0", "sim-node-1", "sim-node-2")
	p := pods["sim-node-1"][0]
	p.Status.Phase = corev1.PodFailed
	p.Status.Conditions = nil
	if _, err := e.cs.CoreV1().Pods(e.ns).UpdateStatus(t.Context(), &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, pods = e.waitOn(t, "agent", "sim-node-0", "sim-node-1", "sim-node-2")
	if pods["sim-node-1"][0].UID == p.UID {
		t.Fatalf("failed pod %s kept", p.Name)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		if _, err := e.cs.CoreV1().Pods(e.ns).Get(t.Context(), p.Name, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("failed pod %s still exists", p.Name)
		}
		return nil
	})
}

// testRollingUpdate: a new template replaces the pods node by node,
// never more than maxUnavailable (1) node without a ready pod; kubectl
// rollout status waits for it; the old revision is kept.
func (e *env) testRollingUpdate(t *testing.T, rec *workloadtest.Recorder) {
	ds, _ := e.waitOn(t, "agent", "sim-node-0", "sim-node-1", "sim-node-2")
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType ||
		ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable.IntValue() != 1 {
		t.Fatalf("update strategy %+v", ds.Spec.UpdateStrategy)
	}
	start := lastRV(rec)
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Patch(t.Context(), "agent", types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:1.37"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	out := e.kubectl(t, "rollout", "status", "daemonset/agent", "--timeout=60s")
	if !strings.Contains(out, `daemon set "agent" successfully rolled out`) {
		t.Errorf("kubectl rollout status: %s", out)
	}
	_, pods := e.waitOn(t, "agent", "sim-node-0", "sim-node-1", "sim-node-2")
	for _, ps := range pods {
		if ps[0].Spec.Containers[0].Image != "busybox:1.37" {
			t.Errorf("pod %s runs %s", ps[0].Name, ps[0].Spec.Containers[0].Image)
		}
	}
	revs, err := e.cs.AppsV1().ControllerRevisions(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=agent"})
	if err != nil {
		t.Fatal(err)
	}
	var numbers []int64
	for _, r := range revs.Items {
		numbers = append(numbers, r.Revision)
	}
	slices.Sort(numbers)
	if !slices.Equal(numbers, []int64{1, 2}) {
		t.Errorf("revisions %v, want [1 2]", numbers)
	}
	checkUnavailable(t, rec, "agent", start, 1)
	// kubectl rollout undo puts revision 1's template back; its revision
	// becomes 3.
	if out := e.kubectl(t, "rollout", "history", "daemonset/agent"); !strings.Contains(out, "1 ") || !strings.Contains(out, "2 ") {
		t.Errorf("kubectl rollout history:\n%s", out)
	}
	e.kubectl(t, "rollout", "undo", "daemonset/agent")
	if out := e.kubectl(t, "rollout", "status", "daemonset/agent", "--timeout=60s"); !strings.Contains(out, "successfully rolled out") {
		t.Errorf("kubectl rollout status after undo: %s", out)
	}
	_, pods = e.waitOn(t, "agent", simNodes...)
	for _, ps := range pods {
		if ps[0].Spec.Containers[0].Image != "busybox" {
			t.Errorf("after undo, pod %s runs %s", ps[0].Name, ps[0].Spec.Containers[0].Image)
		}
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		revs, err := e.cs.AppsV1().ControllerRevisions(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=agent"})
		if err != nil {
			return err
		}
		got := map[int64]string{}
		for _, r := range revs.Items {
			got[r.Revision] = r.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
		}
		if len(got) != 2 || got[3] == "" || got[2] == "" || got[3] != pods["sim-node-0"][0].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] {
			return fmt.Errorf("revisions after undo: %v", got)
		}
		return nil
	})
}

var simNodes = []string{"sim-node-0", "sim-node-1", "sim-node-2"}

// checkUnavailable replays the pods: after resourceVersion start, never
// more than most simulated nodes lacked a ready pod of app.
func checkUnavailable(t *testing.T, rec *workloadtest.Recorder, app string, start int64, most int) {
	t.Helper()
	ready := map[string]map[types.UID]bool{} // node -> ready pods
	for _, ev := range rec.Events() {
		p := ev.Object.(*corev1.Pod)
		if p.Labels["app"] != app || p.Spec.NodeName == "" {
			continue
		}
		if ready[p.Spec.NodeName] == nil {
			ready[p.Spec.NodeName] = map[types.UID]bool{}
		}
		if ev.Type != watch.Deleted && workload.IsActive(p) && workload.IsReady(p) {
			ready[p.Spec.NodeName][p.UID] = true
		} else {
			delete(ready[p.Spec.NodeName], p.UID)
		}
		if ev.RV <= start {
			continue
		}
		lacking := 0
		for _, n := range simNodes {
			if len(ready[n]) == 0 {
				lacking++
			}
		}
		if lacking > most {
			t.Fatalf("at resourceVersion %d, %d nodes lack a ready %s pod (at most %d may)", ev.RV, lacking, app, most)
		}
	}
}

// lastRV is the resourceVersion of the last pod event recorded.
func lastRV(rec *workloadtest.Recorder) int64 {
	if evs := rec.Events(); len(evs) > 0 {
		return evs[len(evs)-1].RV
	}
	return 0
}

// testSurge: with maxSurge 1 and maxUnavailable 0 the new pod starts
// next to the old one, which goes once the new one is ready: every node
// keeps a ready pod throughout.
func (e *env) testSurge(t *testing.T, rec *workloadtest.Recorder) {
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Create(t.Context(), daemonSet("surge", func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{
			MaxSurge: new(intstr.FromInt32(1)), MaxUnavailable: new(intstr.FromInt32(0))}
	}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitOn(t, "surge", simNodes...)
	start := lastRV(rec)
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Patch(t.Context(), "surge", types.MergePatchType,
		[]byte(`{"spec":{"template":{"metadata":{"annotations":{"v":"2"}}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := e.kubectl(t, "rollout", "status", "daemonset/surge", "--timeout=60s"); !strings.Contains(out, "successfully rolled out") {
		t.Errorf("kubectl rollout status: %s", out)
	}
	_, pods := e.waitOn(t, "surge", simNodes...)
	for _, ps := range pods {
		if ps[0].Annotations["v"] != "2" {
			t.Errorf("pod %s: annotations %v", ps[0].Name, ps[0].Annotations)
		}
	}
	checkUnavailable(t, rec, "surge", start, 0)
}

// testOnDelete: a new template changes no pod until one is deleted; its
// replacement runs the new template.
func (e *env) testOnDelete(t *testing.T) {
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Create(t.Context(), daemonSet("manual", func(ds *appsv1.DaemonSet) {
		ds.Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType
	}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, before := e.waitOn(t, "manual", simNodes...)
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Patch(t.Context(), "manual", types.MergePatchType,
		[]byte(`{"spec":{"template":{"metadata":{"annotations":{"v":"2"}}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		ds, err := e.cs.AppsV1().DaemonSets(e.ns).Get(t.Context(), "manual", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ds.Status.ObservedGeneration != ds.Generation || ds.Status.UpdatedNumberScheduled != 0 || ds.Status.NumberAvailable != 3 {
			return fmt.Errorf("status %+v at generation %d", ds.Status, ds.Generation)
		}
		return nil
	})
	victim := before["sim-node-0"][0]
	if err := e.cs.CoreV1().Pods(e.ns).Delete(t.Context(), victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		ds, err := e.cs.AppsV1().DaemonSets(e.ns).Get(t.Context(), "manual", metav1.GetOptions{})
		if err != nil {
			return err
		}
		pods, err := e.podsByNode(t.Context(), ds.UID)
		if err != nil {
			return err
		}
		for _, n := range simNodes {
			if len(pods[n]) != 1 {
				return fmt.Errorf("%d pods on %s", len(pods[n]), n)
			}
			p := pods[n][0]
			if replaced := p.UID != before[n][0].UID; replaced != (n == "sim-node-0") || replaced != (p.Annotations["v"] == "2") {
				return fmt.Errorf("pod %s on %s: annotations %v", p.Name, n, p.Annotations)
			}
		}
		if ds.Status.UpdatedNumberScheduled != 1 || ds.Status.NumberAvailable != 3 {
			return fmt.Errorf("status %+v", ds.Status)
		}
		return nil
	})
}

// testLeaderChange: the next leader's controller takes over: a new
// template rolls out, ending with exactly one pod per node.
func (e *env) testLeaderChange(t *testing.T) {
	leader := e.c.WaitLeader()
	if leader == e.member {
		t.Fatalf("the test's member %d is the leader", e.member)
	}
	e.c.Stop(leader)
	t.Cleanup(func() { e.c.Restart(leader) })
	if _, err := e.cs.AppsV1().DaemonSets(e.ns).Patch(t.Context(), "agent", types.MergePatchType,
		[]byte(`{"spec":{"template":{"metadata":{"annotations":{"after":"failover"}}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	_, pods := e.waitOn(t, "agent", simNodes...)
	for n, ps := range pods {
		if ps[0].Annotations["after"] != "failover" {
			t.Errorf("pod %s on %s: annotations %v", ps[0].Name, n, ps[0].Annotations)
		}
	}
}

// kubectl runs kubectl against the test's member; it skips the test when
// there is no kubectl.
func (e *env) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	args = append([]string{"--kubeconfig", e.c.Kubeconfig(e.member), "-n", e.ns}, args...)
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
