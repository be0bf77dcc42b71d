package realcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/test/proc"
)

// simNode is the simulated node SimulatedNodes(1) starts.
const simNode = "sim-node-0"

// simToleration lets a pod run on the simulated node.
const simToleration = `{key: ` + SimulatedNodeTaint + `, operator: Equal, value: "true", effect: NoSchedule}`

// waitNode waits until node satisfies ok and returns it.
func waitNode(t *testing.T, cs kubernetes.Interface, name string, d time.Duration, ok func(*corev1.Node) error) *corev1.Node {
	t.Helper()
	var n *corev1.Node
	eventually(t, d, func() (err error) {
		if n, err = cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		return ok(n)
	})
	return n
}

func isReady(n *corev1.Node) error {
	if !nodeReady(n) {
		return fmt.Errorf("node %s not Ready: %s", n.Name, conditions(n))
	}
	return nil
}

// waitNodes waits until the real node is Ready and the simulated one is
// Ready with its taint.
func waitNodes(t *testing.T, c *Cluster, cs kubernetes.Interface) {
	t.Helper()
	n := waitNode(t, cs, c.Env["NODE_NAME"], 3*time.Minute, isReady)
	t.Logf("node %s Ready: %s", n.Name, conditions(n))
	n = waitNode(t, cs, simNode, time.Minute, func(n *corev1.Node) error {
		if err := isReady(n); err != nil {
			return err
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key == SimulatedNodeTaint && tn.Effect == corev1.TaintEffectNoSchedule {
				return nil
			}
		}
		return fmt.Errorf("node %s taints %v, want %s", n.Name, n.Spec.Taints, SimulatedNodeTaint)
	})
	t.Logf("node %s Ready, taints %v", n.Name, n.Spec.Taints)
}

// members asks for `ctl status` through each member's own data-dir
// kubeconfig (an admin client certificate).
type members struct {
	c   *Cluster
	ctl string
}

func newMembers(t *testing.T, c *Cluster) members {
	t.Helper()
	if len(c.Members) != 3 {
		t.Fatalf("members = %v, want 3", c.Members)
	}
	return members{c: c, ctl: proc.Build(t, "cmd/ctl")}
}

// roles runs `ctl status` (logged) and returns each member's role, in
// c.Members' order.
func (m members) roles(t *testing.T) []string {
	t.Helper()
	kc := filepath.Join(m.c.StateDir, "litek8s", "m0", "kubeconfig")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	table, err := exec.CommandContext(ctx, m.ctl, "--kubeconfig", kc, "status").CombinedOutput()
	t.Logf("$ ctl status (%v)\n%s", err, table)
	out, err := exec.CommandContext(ctx, m.ctl, "--kubeconfig", kc, "status", "-o", "json").Output()
	if err != nil {
		t.Fatalf("ctl status -o json: %v", err)
	}
	var st struct {
		Members []struct {
			Status *struct {
				APIURL string `json:"apiURL"`
				Role   string `json:"role"`
			} `json:"status"`
		} `json:"members"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("ctl status -o json: %v\n%s", err, out)
	}
	roles := make([]string, len(m.c.Members))
	for _, s := range st.Members {
		for i, u := range m.c.Members {
			if s.Status != nil && strings.TrimSuffix(s.Status.APIURL, "/") == u {
				roles[i] = s.Status.Role
			}
		}
	}
	return roles
}

// follower returns the index of a member ctl status reports as a
// Follower.
func (m members) follower(t *testing.T) int {
	t.Helper()
	for i, r := range m.roles(t) {
		if r == "Follower" {
			t.Logf("member %d (%s) is a follower", i, m.c.Members[i])
			return i
		}
	}
	t.Fatal("ctl status reports no follower")
	return -1
}

// assertFollower fails the test unless ctl status reports member i as a
// Follower.
func (m members) assertFollower(t *testing.T, i int, when string) {
	t.Helper()
	if r := m.roles(t)[i]; r != "Follower" {
		t.Fatalf("%s: member %d (%s) is %q, want Follower", when, i, m.c.Members[i], r)
	}
}

// readyWatch follows the pods of a label selector and records the fewest
// that were Ready and not being deleted at once, from when it started.
type readyWatch struct {
	mu     sync.Mutex // guards the fields below
	pods   map[string]bool
	min    int
	events []string
	cancel context.CancelFunc
	done   chan struct{}
}

// watchReady starts a readyWatch; stop ends it and returns the minimum.
func watchReady(t *testing.T, cs kubernetes.Interface, ns, selector string) *readyWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	rw := &readyWatch{pods: map[string]bool{}, min: -1, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(rw.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			rw.observe(ev.Type, p)
		}
	}()
	return rw
}

func (rw *readyWatch) observe(typ watch.EventType, p *corev1.Pod) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	ready := typ != watch.Deleted && p.DeletionTimestamp == nil && podReady(p)
	if rw.pods[p.Name] != ready || typ != watch.Modified {
		rw.events = append(rw.events, fmt.Sprintf("%s %s %s on %q ready=%v deleting=%v",
			time.Now().Format("15:04:05.000"), typ, p.Name, p.Spec.NodeName, ready, p.DeletionTimestamp != nil))
	}
	rw.pods[p.Name] = ready
	if n := rw.count(); rw.min < 0 || n < rw.min {
		rw.min = n
	}
}

// count is how many pods are Ready and not being deleted; caller must
// hold mu.
func (rw *readyWatch) count() int {
	n := 0
	for _, r := range rw.pods {
		if r {
			n++
		}
	}
	return n
}

// ready is how many pods are Ready and not being deleted now.
func (rw *readyWatch) ready() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.count()
}

// reset starts the minimum again from the pods Ready now.
func (rw *readyWatch) reset() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.min = rw.count()
}

// stop ends the watch and returns the minimum and the changes it saw.
func (rw *readyWatch) stop() (int, []string) {
	rw.cancel()
	<-rw.done
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.min, rw.events
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podsOn lists the pods of a selector as "name@node" (sorted), with
// whether each is being deleted.
func podsOn(t *testing.T, cs kubernetes.Interface, ns, selector string) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

func describePods(pods []corev1.Pod) string {
	var parts []string
	for _, p := range pods {
		s := fmt.Sprintf("%s@%s %s ready=%v", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p))
		if p.DeletionTimestamp != nil {
			s += " terminating"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
