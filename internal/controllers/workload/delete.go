package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

// Deleter deletes an owner's pods: concurrently, each with a uid
// precondition (a pod that replaced the one decided on survives), expected
// under the owner's key so that a sync does not act again before the
// deletions come back through the informer.
type Deleter struct {
	Client kubernetes.Interface
	Exp    *Expectations
	Events record.EventRecorder
	// Controller prefixes errors ("job", "replicaset"); WarnOnFailure
	// also records a FailedDelete event on the owner.
	Controller    string
	WarnOnFailure bool
}

// Delete deletes pods of owner (key is the owner's queue key). A pod
// already gone counts as deleted.
func (d *Deleter) Delete(ctx context.Context, key string, owner runtime.Object, pods []*corev1.Pod) error {
	if len(pods) == 0 {
		return nil
	}
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = p.Namespace + "/" + p.Name
	}
	d.Exp.ExpectDeletions(key, keys)
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		wg.Go(func() {
			err := d.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name,
				metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(p.UID))})
			switch {
			case err == nil:
				d.Events.Eventf(owner, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
			case apierrors.IsNotFound(err):
				d.Exp.DeletionObserved(key, keys[i])
			default:
				d.Exp.DeletionObserved(key, keys[i])
				if d.WarnOnFailure {
					d.Events.Eventf(owner, corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
				}
				errs[i] = fmt.Errorf("%s: delete pod %s: %w", d.Controller, keys[i], err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
