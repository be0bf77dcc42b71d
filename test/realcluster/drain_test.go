package realcluster

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// drainWithPDB: a 2-replica Deployment on the real node (the simulated
// one cordoned meanwhile) with a PodDisruptionBudget minAvailable 1, that
// tolerates the simulated node's taint; `kubectl drain` of the real node
// evicts its pods one at a time (the second eviction is refused with 429
// until the first pod's replacement is Ready on the simulated node), and
// at no moment are fewer than one of its pods Ready; then `kubectl
// uncordon` and CoreDNS (evicted too, with nowhere else to run) is back.
func drainWithPDB(t *testing.T, c *Cluster, k kubectl, image string) {
	k.t = t
	cs := clientset(t, c.Kubeconfig)
	node := c.Env["NODE_NAME"]
	const sel = "app=drain-web"
	k.run("cordon", simNode) // the Deployment starts on the real node
	k.apply(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: drain-web, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: drain-web}}
  template:
    metadata: {labels: {app: drain-web}}
    spec:
      terminationGracePeriodSeconds: 2
      tolerations: [%[3]s]
      containers:
      - name: web
        image: %[2]s
        imagePullPolicy: Never
        command: [sh, -c, 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www']
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: drain-web, namespace: %[1]s}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: drain-web}}
`, followerNS, image, simToleration))
	k.run("-n", followerNS, "rollout", "status", "deployment/drain-web", "--timeout=120s")
	for _, p := range podsOn(t, cs, followerNS, sel) {
		if p.Spec.NodeName != node {
			t.Fatalf("pod %s on %q before the drain, want %s", p.Name, p.Spec.NodeName, node)
		}
	}
	k.run("uncordon", simNode)
	quiet := k
	quiet.verbose = false
	err := poll(30*time.Second, func() error {
		if got := quiet.run("-n", followerNS, "get", "pdb", "drain-web", "-o", "jsonpath={.status.disruptionsAllowed}"); got != "1" {
			return fmt.Errorf("pdb drain-web status.disruptionsAllowed = %q, want 1", got)
		}
		return nil
	})
	k.run("-n", followerNS, "get", "pdb", "drain-web", "-o", "wide")
	if err != nil {
		t.Logf("%v after 30 s (the disruption controller computes it): the drain's evictions will be refused", err)
	}

	rw := watchReady(t, cs, followerNS, sel)
	eventually(t, 30*time.Second, func() error {
		if n := rw.ready(); n != 2 {
			return fmt.Errorf("the watch sees %d Ready pods of drain-web, want 2", n)
		}
		return nil
	})
	rw.reset()
	start := time.Now()
	out, derr := k.try("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force",
		"--grace-period=2", "--timeout=120s")
	t.Logf("drain took %s", time.Since(start).Round(time.Second))
	defer func() {
		k.run("uncordon", node)
		if u := k.run("get", "node", node, "-o", "jsonpath={.spec.unschedulable}"); u != "" {
			t.Errorf("node %s spec.unschedulable = %q after uncordon", node, u)
		}
		k.run("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=120s")
	}()
	if derr != nil {
		min, events := rw.stop()
		t.Logf("drain-web pods (fewest Ready: %d):\n%s", min, strings.Join(events, "\n"))
		if strings.Contains(out, "disruption budget") {
			t.Fatalf("kubectl drain failed: every eviction of a drain-web pod was refused by its PodDisruptionBudget "+
				"for 120 s (status.disruptionsAllowed never became 1: no disruption controller?): %v", derr)
		}
		t.Fatalf("kubectl drain: %v", derr)
	}
	eventually(t, 2*time.Minute, func() error {
		pods := podsOn(t, cs, followerNS, sel)
		if len(pods) != 2 {
			return fmt.Errorf("drain-web pods: %s; want 2 Ready on %s", describePods(pods), simNode)
		}
		for _, p := range pods {
			if p.Spec.NodeName != simNode || !podReady(&p) || p.DeletionTimestamp != nil {
				return fmt.Errorf("drain-web pods: %s; want 2 Ready on %s", describePods(pods), simNode)
			}
		}
		return nil
	})
	min, events := rw.stop()
	t.Logf("drain-web pods during the drain (fewest Ready and not terminating: %d):\n%s", min, strings.Join(events, "\n"))
	if min < 1 {
		t.Errorf("at some moment %d drain-web pods were Ready, below the PodDisruptionBudget's minAvailable 1", min)
	}
	for _, want := range []string{"evicting pod " + followerNS + "/drain-web-", "would violate the pod's disruption budget",
		"node/" + node + " drained"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl drain's output lacks %q", want)
		}
	}
}
