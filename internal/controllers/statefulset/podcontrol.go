package statefulset

import (
	"context"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod writes, with kube's events: "SuccessfulCreate" / "create Pod web-0
// in StatefulSet web successful" and their Failed… counterparts.

// createPod creates pod's claims, then pod, then sets its claims' owners.
func (c *controller) createPod(ctx context.Context, key string, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := c.createClaims(ctx, key, set, pod); err != nil {
		c.podEvent("create", set, pod, err)
		return err
	}
	created, err := c.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return err
	}
	if err == nil {
		c.written.wrote(key, podsResource, created.ResourceVersion)
		pod = created
		if err := c.fixClaimOwners(ctx, key, set, pod); err != nil {
			c.podEvent("update", set, pod, err)
			return err
		}
	}
	c.podEvent("create", set, pod, err)
	return err
}

// deletePod deletes pod (that very pod: a uid precondition); gone is
// deleted.
func (c *controller) deletePod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name,
		metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) {
		c.podEvent("delete", set, pod, err)
		return err
	}
	c.podEvent("delete", set, pod, nil)
	return nil
}

// fixPod gives pod (a copy) set's identity and storage and its claims
// the policy's owners (claimsOK: they have them already).
func (c *controller) fixPod(ctx context.Context, key string, set *appsv1.StatefulSet, pod *corev1.Pod, claimsOK bool) error {
	dirty := false
	if !identityMatches(set, pod) {
		updateIdentity(set, pod)
		dirty = true
	}
	if !storageMatches(set, pod) {
		updateStorage(set, pod)
		dirty = true
		if err := c.createClaims(ctx, key, set, pod); err != nil {
			c.podEvent("update", set, pod, err)
			return err
		}
	}
	if !claimsOK {
		if err := c.fixClaimOwners(ctx, key, set, pod); err != nil {
			c.podEvent("update", set, pod, err)
			return err
		}
	}
	if !dirty {
		return nil
	}
	updated, err := c.client.CoreV1().Pods(pod.Namespace).Update(ctx, pod, metav1.UpdateOptions{})
	if err == nil {
		c.written.wrote(key, podsResource, updated.ResourceVersion)
	}
	c.podEvent("update", set, pod, err)
	return err
}

func title(verb string) string { return strings.ToUpper(verb[:1]) + verb[1:] }

func (c *controller) podEvent(verb string, set *appsv1.StatefulSet, pod *corev1.Pod, err error) {
	if err == nil {
		c.events.Eventf(set, corev1.EventTypeNormal, "Successful"+title(verb), "%s Pod %s in StatefulSet %s successful",
			title(verb), pod.Name, set.Name)
		return
	}
	c.events.Eventf(set, corev1.EventTypeWarning, "Failed"+title(verb), "%s Pod %s in StatefulSet %s failed error: %s",
		title(verb), pod.Name, set.Name, err)
}

func (c *controller) claimEvent(verb string, set *appsv1.StatefulSet, pod *corev1.Pod, claim string, err error) {
	if err == nil {
		c.events.Eventf(set, corev1.EventTypeNormal, "Successful"+title(verb), "%s Claim %s Pod %s in StatefulSet %s success",
			title(verb), claim, pod.Name, set.Name)
		return
	}
	c.events.Eventf(set, corev1.EventTypeWarning, "Failed"+title(verb), "%s Claim %s for Pod %s in StatefulSet %s failed error: %s",
		title(verb), claim, pod.Name, set.Name, err)
}
