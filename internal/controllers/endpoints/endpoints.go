package endpoints

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// EndpointsName is kube's name for the Endpoints controller (its client's
// User-Agent suffix and its events' source).
const EndpointsName = "endpoint-controller"

// endpointsManagedBy labels the Endpoints the controller manages.
const endpointsManagedBy = "endpoints.kubernetes.io/managed-by"

// endpointsController maintains core/v1 Endpoints.
type endpointsController struct {
	*serviceQueue
	client    kubernetes.Interface
	endpoints corelisters.EndpointsLister
	recorder  record.EventRecorder
}

// New returns the Endpoints controller of the term of kc.
func New(kc *kit.Context, cfg Config) kit.Controller {
	inf := kc.Informers.Endpoints()
	c := &endpointsController{client: kc.Client(EndpointsName),
		endpoints: corelisters.NewEndpointsLister(inf.GetIndexer()), recorder: kc.Recorder(EndpointsName)}
	c.serviceQueue = newServiceQueue(kc, cfg, EndpointsName, c.sync)
	// Endpoints deleted by someone else come back.
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueue})
	return c
}

func (c *endpointsController) Name() string { return "endpoint" }

func (c *endpointsController) Run(ctx context.Context) { c.run(ctx) }

// sync makes the Endpoints of the service at key match its pods.
func (c *endpointsController) sync(ctx context.Context, key string) error {
	svc, gone, err := c.selected(key)
	if err != nil || svc == nil && !gone {
		return err
	}
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	cur, err := c.endpoints.Endpoints(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if gone { // the Endpoints go with their service
		if cur == nil {
			return nil
		}
		uid := cur.UID
		err := c.client.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	pods, err := c.backing(svc)
	if err != nil {
		return err
	}
	subsets := subsetsOf(endpointsOf(svc, pods, false))
	lbls := endpointsLabels(svc)
	if cur != nil && apiequality.Semantic.DeepEqual(cur.Subsets, subsets) && maps.Equal(cur.Labels, lbls) {
		return nil
	}
	if cur == nil {
		want := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbls}, Subsets: subsets}
		_, err = c.client.CoreV1().Endpoints(ns).Create(ctx, want, metav1.CreateOptions{})
		switch {
		case err == nil, namespaceTerminating(err):
			return nil
		case !apierrors.IsAlreadyExists(err): // AlreadyExists: the cache is a step behind
			c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToCreateEndpoint",
				"Failed to create endpoint for service %s/%s: %v", ns, name, err)
		}
		return err
	}
	want := cur.DeepCopy()
	want.Labels, want.Subsets = lbls, subsets
	_, err = c.client.CoreV1().Endpoints(ns).Update(ctx, want, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpoint",
			"Failed to update endpoint %s/%s: %v", ns, name, err)
	}
	return err
}

// endpointsLabels are the service's labels, the headless marker and the
// managed-by label.
func endpointsLabels(svc *corev1.Service) map[string]string {
	out := maps.Clone(svc.Labels)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, corev1.IsHeadlessService)
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		out[corev1.IsHeadlessService] = ""
	}
	out[endpointsManagedBy] = EndpointsName
	return out
}

// subsetsOf groups endpoints by port set (kube's RepackSubsets), sorted.
func subsetsOf(eps []endpoint) []corev1.EndpointSubset {
	byKey := map[string]*corev1.EndpointSubset{}
	var keys []string
	for _, e := range eps {
		k := portsKey(e.ports)
		ss := byKey[k]
		if ss == nil {
			ss = &corev1.EndpointSubset{}
			for _, p := range e.ports {
				ss.Ports = append(ss.Ports, corev1.EndpointPort{Name: p.name, Port: p.port, Protocol: p.protocol,
					AppProtocol: p.appProtocol})
			}
			byKey[k] = ss
			keys = append(keys, k)
		}
		a := corev1.EndpointAddress{IP: e.ip, Hostname: e.hostname, TargetRef: &corev1.ObjectReference{
			Kind: "Pod", Namespace: e.pod.Namespace, Name: e.pod.Name, UID: e.pod.UID}}
		if n := e.pod.Spec.NodeName; n != "" {
			a.NodeName = &n
		}
		if e.ready {
			ss.Addresses = append(ss.Addresses, a)
		} else {
			ss.NotReadyAddresses = append(ss.NotReadyAddresses, a)
		}
	}
	slices.Sort(keys)
	var out []corev1.EndpointSubset
	for _, k := range keys {
		ss := byKey[k]
		sortAddresses(ss.Addresses)
		sortAddresses(ss.NotReadyAddresses)
		out = append(out, *ss)
	}
	return out
}

func sortAddresses(as []corev1.EndpointAddress) {
	slices.SortFunc(as, func(a, b corev1.EndpointAddress) int {
		return cmp.Or(strings.Compare(a.IP, b.IP), strings.Compare(a.TargetRef.Name, b.TargetRef.Name))
	})
}
