package monitoring

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
)

// loadCounts counts what the load did (successes only).
type loadCounts struct {
	writes, lists, events, scales atomic.Int64
}

func (c *loadCounts) String() string {
	return fmt.Sprintf("%d writes, %d lists, %d watch events, %d scalings",
		c.writes.Load(), c.lists.Load(), c.events.Load(), c.scales.Load())
}

// load puts work on the members until ctx ends: through every member a
// writer (create, update, delete ConfigMaps), a lister (consistent lists
// of ConfigMaps and Pods) and a watcher of ConfigMaps and Pods; and a
// Deployment, created through one member and scaled between 3 and 6
// replicas through another, for the controllers, the scheduler and the
// simulated nodes. Every goroutine joins wg. Errors (conflicts, a
// member resyncing) are part of a load and are not reported; the counts
// tell whether work was done.
func load(ctx context.Context, wg *sync.WaitGroup, clients []*kubernetes.Clientset, counts *loadCounts) {
	every := func(d time.Duration, f func(n int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(d)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				f(n)
			}
		}()
	}
	for i, cs := range clients {
		cms := cs.CoreV1().ConfigMaps("default")
		every(20*time.Millisecond, func(n int) { writeConfigMap(ctx, cms, fmt.Sprintf("load-%d-%d", i, n%20), n, counts) })
		every(50*time.Millisecond, func(int) {
			if _, err := cms.List(ctx, metav1.ListOptions{}); err == nil {
				counts.lists.Add(1)
			}
			if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err == nil {
				counts.lists.Add(1)
			}
		})
		every(100*time.Millisecond, func(int) { watchOnce(ctx, cms.Watch, counts) })
		every(100*time.Millisecond, func(int) { watchOnce(ctx, cs.CoreV1().Pods("default").Watch, counts) })
	}
	deployments := clients[1%len(clients)].AppsV1().Deployments("default")
	every(time.Second, func(n int) {
		d, err := clients[2%len(clients)].AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			deployments.Create(ctx, webDeployment(), metav1.CreateOptions{})
			return
		}
		if err != nil || n%3 != 0 {
			return
		}
		d.Spec.Replicas = ptr.To(9 - *d.Spec.Replicas) // 6, 3, 6, ...
		if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); err == nil {
			counts.scales.Add(1)
		}
	})
}

// writeConfigMap creates name, or updates it when it exists; every 10th
// write deletes it instead.
func writeConfigMap(ctx context.Context, cms typedcorev1.ConfigMapInterface, name string, n int, counts *loadCounts) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": strconv.Itoa(n)}}
	var err error
	switch {
	case n%10 == 9:
		err = cms.Delete(ctx, name, metav1.DeleteOptions{})
	default:
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{}) // no resourceVersion: unconditional
		}
	}
	if err == nil {
		counts.writes.Add(1)
	}
}

// watchOnce runs one watch until it ends (410 after a resync, the member
// closing it, ctx), counting its events.
func watchOnce(ctx context.Context, start func(context.Context, metav1.ListOptions) (watch.Interface, error), counts *loadCounts) {
	w, err := start(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	defer w.Stop()
	for range w.ResultChan() {
		counts.events.Add(1)
	}
}

func webDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](6),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}
