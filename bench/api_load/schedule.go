package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// scheduleNS holds the schedule scenario's Deployments.
const scheduleNS = "schedule"

// prepareSchedule: one op is a Deployment of -schedule-replicas Pods
// created on the leader, until every one of its Pods has a node (bound by
// the scheduler to the leader's -simulated-nodes). The Deployment is then
// deleted and the op waits, untimed, until its Pods are gone, so that no
// deletion is left running into the next op or scenario (ops/s counts
// that time, the latencies do not).
func prepareSchedule(ctx context.Context, b *bench) (*prepared, error) {
	cs, err := kubernetes.NewForConfig(b.cl.restConfig(b.leader))
	if err != nil {
		return nil, err
	}
	if err := createNamespaces(ctx, b.leader, scheduleNS); err != nil {
		return nil, err
	}
	err = poll(ctx, time.Minute, func() error {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if ready := readyNodes(nodes.Items); ready < b.opts.simNodes {
			return fmt.Errorf("%d of %d simulated nodes ready", ready, b.opts.simNodes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &prepared{run: func(ctx context.Context, id string, d time.Duration) ([]time.Duration, time.Duration, error) {
		var lats []time.Duration
		start := time.Now()
		for seq := 0; seq == 0 || time.Since(start) < d; seq++ {
			lat, err := scheduleOnce(ctx, cs, fmt.Sprintf("sched-%s-%d", id, seq), int32(b.opts.scheduleReplicas))
			if err != nil {
				return nil, 0, err
			}
			lats = append(lats, lat)
		}
		return lats, time.Since(start), nil
	}}, nil
}

func readyNodes(nodes []corev1.Node) int {
	n := 0
	for _, node := range nodes {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && !node.Spec.Unschedulable {
				n++
			}
		}
	}
	return n
}

// scheduleOnce creates the Deployment name and returns the time until
// all its replicas have a node, then deletes it.
func scheduleOnce(ctx context.Context, cs kubernetes.Interface, name string, replicas int32) (time.Duration, error) {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}}}}}}
	t0 := time.Now()
	created, err := cs.AppsV1().Deployments(scheduleNS).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("schedule: create deployment %s: %w", name, err)
	}
	w, err := cs.CoreV1().Pods(scheduleNS).Watch(ctx, metav1.ListOptions{LabelSelector: "app=" + name,
		ResourceVersion: created.ResourceVersion})
	if err != nil {
		return 0, fmt.Errorf("schedule: watch pods of %s: %w", name, err)
	}
	defer w.Stop()
	bound := make(map[string]bool)
	timeout := time.NewTimer(scheduleTimeout(replicas))
	defer timeout.Stop()
	for len(bound) < int(replicas) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("schedule: watch of %s's pods ended with %d of %d bound", name, len(bound), replicas)
			}
			switch p, _ := ev.Object.(*corev1.Pod); {
			case ev.Type == watch.Error:
				return 0, fmt.Errorf("schedule: watch of %s's pods: %v", name, ev.Object)
			case p == nil:
			case ev.Type == watch.Deleted:
				delete(bound, p.Name)
			case p.Spec.NodeName != "":
				bound[p.Name] = true
			}
		case <-timeout.C:
			return 0, fmt.Errorf("schedule: %d of %d pods of %s bound after %v", len(bound), replicas, name, scheduleTimeout(replicas))
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
	lat := time.Since(t0)
	bg := metav1.DeletePropagationBackground
	if err := cs.AppsV1().Deployments(scheduleNS).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		return 0, fmt.Errorf("schedule: delete deployment %s: %w", name, err)
	}
	err = poll(ctx, scheduleTimeout(replicas), func() error {
		l, err := cs.CoreV1().Pods(scheduleNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name, Limit: 1})
		if err == nil && len(l.Items) > 0 {
			err = fmt.Errorf("pods of %s still there (%s)", name, l.Items[0].Name)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("schedule: delete deployment %s: %w", name, err)
	}
	return lat, nil
}

// scheduleTimeout is how long replicas may take to be bound.
func scheduleTimeout(replicas int32) time.Duration {
	return 30*time.Second + time.Duration(replicas)*20*time.Millisecond
}

// restConfig is a client-go configuration for ep with the admin token.
func (c *cluster) restConfig(ep *endpoint) *rest.Config {
	return &rest.Config{Host: ep.url, BearerToken: c.token, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caPEM}}
}
