package endpoints

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// SlicesName is kube's name for the EndpointSlice controller (its
// client's User-Agent suffix and its events' source).
const SlicesName = "endpointslice-controller"

// managedBy is the value of discoveryv1.LabelManagedBy on the slices the
// controller owns.
const managedBy = "endpointslice-controller.k8s.io"

// slicesController maintains discovery.k8s.io/v1 EndpointSlices.
type slicesController struct {
	*serviceQueue
	client   kubernetes.Interface
	slices   discoverylisters.EndpointSliceLister
	tracker  *tracker
	recorder record.EventRecorder
}

// NewSlices returns the EndpointSlice controller of the term of kc.
func NewSlices(kc *kit.Context, cfg Config) kit.Controller {
	inf := kc.Informers.EndpointSlices()
	c := &slicesController{client: kc.Client(SlicesName), slices: discoverylisters.NewEndpointSliceLister(inf.GetIndexer()),
		tracker: newTracker(cfg.TrackerTimeout), recorder: kc.Recorder(SlicesName)}
	c.serviceQueue = newServiceQueue(kc, cfg, SlicesName, c.sync)
	// A change to one of its slices (its own write arriving, or someone
	// else's) makes the controller look at the service again.
	onSlice := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelManagedBy] == managedBy {
			if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" {
				c.queue.Add(s.Namespace + "/" + svc)
			}
		}
	}
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onSlice,
		UpdateFunc: func(_, obj any) { onSlice(obj) }, DeleteFunc: onSlice})
	return c
}

func (c *slicesController) Name() string { return "endpointslice" }

func (c *slicesController) Run(ctx context.Context) { c.run(ctx) }

// sync makes the slices of the service at key match its pods.
func (c *slicesController) sync(ctx context.Context, key string) error {
	svc, gone, err := c.selected(key)
	if err != nil {
		return err
	}
	if svc == nil { // gone: the garbage collector deletes its slices
		if gone {
			c.tracker.forget(key)
		}
		return nil
	}
	lister := c.slices.EndpointSlices(svc.Namespace)
	if stale, wait := c.tracker.stale(key, func(name string) *discoveryv1.EndpointSlice {
		s, _ := lister.Get(name)
		return s
	}); stale {
		c.queue.AddAfter(key, wait) // unless the informer's event comes first
		return nil
	}
	existing, err := lister.List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: managedBy}))
	if err != nil {
		return err
	}
	pods, err := c.backing(svc)
	if err != nil {
		return err
	}
	return c.reconcile(ctx, key, svc, existing, c.desired(svc, endpointsOf(svc, pods, true)))
}

// group is the desired slices of one port set.
type group struct {
	key    string
	slices []*discoveryv1.EndpointSlice
}

// desired returns the slices svc should have, by port set (sorted), each
// at most MaxEndpointsPerSlice endpoints; one empty slice when it has no
// endpoint.
func (c *slicesController) desired(svc *corev1.Service, eps []endpoint) []group {
	byKey := map[string][]endpoint{}
	for _, e := range eps {
		k := portsKey(e.ports)
		byKey[k] = append(byKey[k], e)
	}
	if len(byKey) == 0 {
		byKey[""] = nil
	}
	var out []group
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		g := group{key: k}
		for chunk := range slices.Chunk(byKey[k], c.cfg.MaxEndpointsPerSlice) {
			g.slices = append(g.slices, newSlice(svc, chunk))
		}
		if len(g.slices) == 0 {
			g.slices = append(g.slices, newSlice(svc, nil))
		}
		out = append(out, g)
	}
	return out
}

// newSlice is a slice of svc holding eps (which share their ports).
func newSlice(svc *corev1.Service, eps []endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{GenerateName: svc.Name + "-", Namespace: svc.Namespace, Labels: sliceLabels(svc),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service"))}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	if len(eps) > 0 {
		for _, p := range eps[0].ports {
			s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr(p.name), Port: ptr(p.port),
				Protocol: ptr(p.protocol), AppProtocol: p.appProtocol})
		}
	}
	for _, e := range eps {
		ep := discoveryv1.Endpoint{Addresses: []string{e.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(e.ready), Serving: ptr(e.serving), Terminating: ptr(e.terminating)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: e.pod.Namespace, Name: e.pod.Name, UID: e.pod.UID}}
		if n := e.pod.Spec.NodeName; n != "" {
			ep.NodeName = &n
		}
		if e.hostname != "" {
			ep.Hostname = ptr(e.hostname)
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

// sliceLabels are the service's labels (less those the controller sets),
// the service name, managed-by, and the headless marker.
func sliceLabels(svc *corev1.Service) map[string]string {
	out := maps.Clone(svc.Labels)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, corev1.IsHeadlessService)
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		out[corev1.IsHeadlessService] = ""
	}
	out[discoveryv1.LabelServiceName] = svc.Name
	out[discoveryv1.LabelManagedBy] = managedBy
	return out
}

// reconcile writes the difference between the existing slices and the
// desired ones: per port set, existing slices are updated in place (in
// name order), missing ones created, extra ones deleted; creates and
// updates come before deletes, so that endpoints never disappear in
// between.
func (c *slicesController) reconcile(ctx context.Context, key string, svc *corev1.Service,
	existing []*discoveryv1.EndpointSlice, want []group) error {
	byKey := map[string][]*discoveryv1.EndpointSlice{}
	var doomed []*discoveryv1.EndpointSlice
	for _, s := range existing {
		if s.AddressType != discoveryv1.AddressTypeIPv4 || !metav1.IsControlledBy(s, svc) {
			doomed = append(doomed, s)
			continue
		}
		k := slicePortsKey(s)
		byKey[k] = append(byKey[k], s)
	}
	for _, g := range want {
		olds := byKey[g.key]
		delete(byKey, g.key)
		slices.SortFunc(olds, func(a, b *discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
		for i, s := range g.slices {
			var err error
			if i < len(olds) {
				err = c.update(ctx, key, olds[i], s)
			} else {
				err = c.create(ctx, key, svc, s)
			}
			if err != nil {
				return err
			}
		}
		if len(olds) > len(g.slices) {
			doomed = append(doomed, olds[len(g.slices):]...)
		}
	}
	for _, olds := range byKey {
		doomed = append(doomed, olds...)
	}
	for _, s := range doomed {
		uid := s.UID
		err := c.client.DiscoveryV1().EndpointSlices(s.Namespace).Delete(ctx, s.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		c.tracker.wrote(key, s.Name, nil)
	}
	return nil
}

func (c *slicesController) create(ctx context.Context, key string, svc *corev1.Service, s *discoveryv1.EndpointSlice) error {
	got, err := c.client.DiscoveryV1().EndpointSlices(s.Namespace).Create(ctx, s, metav1.CreateOptions{})
	switch {
	case err == nil:
		c.tracker.wrote(key, got.Name, got)
		return nil
	case namespaceTerminating(err):
		return nil
	}
	c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToCreateEndpointSlices",
		"Error creating EndpointSlice for Service %s/%s: %v", svc.Namespace, svc.Name, err)
	return err
}

// update rewrites old as want unless they already agree.
func (c *slicesController) update(ctx context.Context, key string, old, want *discoveryv1.EndpointSlice) error {
	if maps.Equal(old.Labels, want.Labels) && apiequality.Semantic.DeepEqual(old.OwnerReferences, want.OwnerReferences) &&
		apiequality.Semantic.DeepEqual(old.Ports, want.Ports) && apiequality.Semantic.DeepEqual(old.Endpoints, want.Endpoints) {
		return nil
	}
	s := old.DeepCopy()
	s.Labels, s.OwnerReferences, s.Ports, s.Endpoints = want.Labels, want.OwnerReferences, want.Ports, want.Endpoints
	got, err := c.client.DiscoveryV1().EndpointSlices(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	c.tracker.wrote(key, got.Name, got)
	return nil
}

// slicePortsKey is portsKey of a stored slice's ports.
func slicePortsKey(s *discoveryv1.EndpointSlice) string {
	ps := make([]port, 0, len(s.Ports))
	for _, p := range s.Ports {
		ps = append(ps, port{name: deref(p.Name), port: deref(p.Port), protocol: protocolOf(deref(p.Protocol)),
			appProtocol: p.AppProtocol})
	}
	slices.SortFunc(ps, comparePorts)
	return portsKey(ps)
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
