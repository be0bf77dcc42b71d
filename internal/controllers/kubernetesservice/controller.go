package kubernetesservice

import (
	"context"
	"errors"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is the controller's name (its --controllers name and User-Agent
// suffix).
const Name = "kubernetes-service"

// fieldManager is the manager kube records for these objects;
// serviceCIDRManager kube's for the default ServiceCIDR.
const (
	fieldManager       = "kube-apiserver"
	serviceCIDRManager = "kubernetes-service-cidr-controller"
)

type controller struct {
	cfg       Config
	members   Members
	client    kubernetes.Interface
	services  corelisters.ServiceLister
	endpoints corelisters.EndpointsLister
	slices    discoverylisters.EndpointSliceLister
	log       *slog.Logger
	kick      chan struct{} // buffered 1: something changed, reconcile now
	now       func() time.Time
	cidrDone  bool // the default ServiceCIDR was ensured in this term (Run's goroutine only)
}

// New returns the controller of the term of kc.
func New(kc *kit.Context, cfg Config, members Members) kit.Controller {
	svcInf, epInf, slInf := kc.Informers.Services(), kc.Informers.Endpoints(), kc.Informers.EndpointSlices()
	c := &controller{cfg: cfg, members: members, client: kc.Client(Name),
		services:  corelisters.NewServiceLister(svcInf.GetIndexer()),
		endpoints: corelisters.NewEndpointsLister(epInf.GetIndexer()),
		slices:    discoverylisters.NewEndpointSliceLister(slInf.GetIndexer()),
		log:       kc.Log.With("controller", Name), kick: make(chan struct{}, 1), now: time.Now}
	onChange := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if m, ok := obj.(metav1.Object); ok && m.GetNamespace() == Namespace &&
			(m.GetName() == ServiceName || m.GetLabels()[discoveryv1.LabelServiceName] == ServiceName) {
			select {
			case c.kick <- struct{}{}:
			default:
			}
		}
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: onChange, UpdateFunc: func(_, obj any) { onChange(obj) }, DeleteFunc: onChange}
	for _, inf := range []cache.SharedIndexInformer{svcInf, epInf, slInf} {
		inf.AddEventHandler(h)
	}
	return c
}

func (c *controller) Name() string { return Name }

// Run reconciles every Interval and on changes until ctx ends.
func (c *controller) Run(ctx context.Context) {
	start := c.now()
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	for {
		if err := c.reconcile(ctx, start); err != nil && ctx.Err() == nil {
			c.log.Warn("reconciling the kubernetes Service", "err", err)
		}
		if !c.cidrDone {
			err := c.ensureServiceCIDR(ctx)
			c.cidrDone = err == nil
			if err != nil && ctx.Err() == nil {
				c.log.Warn("creating the default ServiceCIDR", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.kick:
		}
	}
}

// reconcile makes the Service, Endpoints and EndpointSlices list the
// members serving now.
func (c *controller) reconcile(ctx context.Context, termStart time.Time) error {
	ms, err := c.members.APIMembers()
	if err != nil {
		return err
	}
	eps := serving(ms, c.now(), termStart, c.cfg.MemberTTL)
	if len(eps) == 0 {
		// No IP address to list (members advertise names): the Service
		// still exists; never erase every endpoint.
		if port, ok := selfPort(ms); ok {
			return c.ensureService(ctx, port)
		}
		return nil
	}
	gs := groups(eps)
	return errors.Join(c.ensureService(ctx, gs[0].port), c.ensureEndpoints(ctx, gs), c.ensureSlices(ctx, gs))
}

func (c *controller) ensureService(ctx context.Context, targetPort int32) error {
	svc, err := c.services.Services(Namespace).Get(ServiceName)
	if apierrors.IsNotFound(err) {
		_, err = c.client.CoreV1().Services(Namespace).Create(ctx, desiredService(c.cfg.ServiceIP, targetPort),
			metav1.CreateOptions{FieldManager: fieldManager})
		return ignoreExists(err)
	}
	if err != nil {
		return err
	}
	want := servicePorts(targetPort)
	if apiequality.Semantic.DeepEqual(svc.Spec.Ports, want) && svc.Spec.Type == corev1.ServiceTypeClusterIP {
		return nil
	}
	svc = svc.DeepCopy()
	svc.Spec.Ports, svc.Spec.Type = want, corev1.ServiceTypeClusterIP
	_, err = c.client.CoreV1().Services(Namespace).Update(ctx, svc, metav1.UpdateOptions{FieldManager: fieldManager})
	return err
}

func (c *controller) ensureEndpoints(ctx context.Context, gs []group) error {
	want := desiredSubsets(gs)
	ep, err := c.endpoints.Endpoints(Namespace).Get(ServiceName)
	if apierrors.IsNotFound(err) {
		ep = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Namespace: Namespace,
			Labels: map[string]string{skipMirrorLabel: "true"}}, Subsets: want}
		_, err = c.client.CoreV1().Endpoints(Namespace).Create(ctx, ep, metav1.CreateOptions{FieldManager: fieldManager})
		return ignoreExists(err)
	}
	if err != nil {
		return err
	}
	if ep.Labels[skipMirrorLabel] == "true" && apiequality.Semantic.DeepEqual(ep.Subsets, want) {
		return nil
	}
	ep = ep.DeepCopy()
	if ep.Labels == nil {
		ep.Labels = map[string]string{}
	}
	ep.Labels[skipMirrorLabel] = "true"
	ep.Subsets = want
	_, err = c.client.CoreV1().Endpoints(Namespace).Update(ctx, ep, metav1.UpdateOptions{FieldManager: fieldManager})
	return err
}

// ensureSlices writes one slice per port group and deletes the slices of
// port groups that are gone.
func (c *controller) ensureSlices(ctx context.Context, gs []group) error {
	api := c.client.DiscoveryV1().EndpointSlices(Namespace)
	want := map[string]bool{}
	var errs []error
	for i := range gs {
		s := desiredSlice(gs, i)
		want[s.Name] = true
		cur, err := c.slices.EndpointSlices(Namespace).Get(s.Name)
		switch {
		case apierrors.IsNotFound(err):
			_, err = api.Create(ctx, s, metav1.CreateOptions{FieldManager: fieldManager})
			errs = append(errs, ignoreExists(err))
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case sliceMatches(cur, s):
			continue
		case cur.AddressType != s.AddressType: // immutable
			if err := api.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
				continue
			}
			_, err = api.Create(ctx, s, metav1.CreateOptions{FieldManager: fieldManager})
			errs = append(errs, ignoreExists(err))
			continue
		}
		upd := cur.DeepCopy()
		upd.Labels, upd.Endpoints, upd.Ports = s.Labels, s.Endpoints, s.Ports
		_, err = api.Update(ctx, upd, metav1.UpdateOptions{FieldManager: fieldManager})
		errs = append(errs, err)
	}
	ours, err := c.slices.EndpointSlices(Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: ServiceName}))
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, s := range ours {
		if _, managed := s.Labels[discoveryv1.LabelManagedBy]; managed || want[s.Name] {
			continue // another controller's, or wanted
		}
		if err := api.Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sliceMatches compares what the controller decides of a slice: labels,
// address type, ports and each endpoint's addresses and readiness (the
// API may default other fields).
func sliceMatches(cur, want *discoveryv1.EndpointSlice) bool {
	if cur.AddressType != want.AddressType || !apiequality.Semantic.DeepEqual(cur.Labels, want.Labels) ||
		!apiequality.Semantic.DeepEqual(cur.Ports, want.Ports) || len(cur.Endpoints) != len(want.Endpoints) {
		return false
	}
	for i, e := range cur.Endpoints {
		w := want.Endpoints[i]
		if !apiequality.Semantic.DeepEqual(e.Addresses, w.Addresses) || e.Conditions.Ready == nil || *e.Conditions.Ready != *w.Conditions.Ready {
			return false
		}
	}
	return true
}

// ignoreExists: created in between; the informer's event makes the next
// pass compare.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ensureServiceCIDR creates the default ServiceCIDR "kubernetes" (the
// service range) when missing and marks it Ready, as kube-apiserver's
// default ServiceCIDR controller does; one that exists is left as it is
// but for a missing Ready condition.
func (c *controller) ensureServiceCIDR(ctx context.Context) error {
	api := c.client.NetworkingV1().ServiceCIDRs()
	sc, err := api.Get(ctx, ServiceName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		sc, err = api.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: ServiceName},
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{c.cfg.ServiceCIDR}}},
			metav1.CreateOptions{FieldManager: serviceCIDRManager})
	}
	if err != nil {
		return err
	}
	if cond := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady); cond != nil &&
		cond.Status != metav1.ConditionUnknown {
		return nil
	}
	sc = sc.DeepCopy()
	apimeta.SetStatusCondition(&sc.Status.Conditions, metav1.Condition{Type: networkingv1.ServiceCIDRConditionReady,
		Status: metav1.ConditionTrue, Message: "Kubernetes default Service CIDR is ready", LastTransitionTime: metav1.NewTime(c.now())})
	_, err = api.UpdateStatus(ctx, sc, metav1.UpdateOptions{FieldManager: serviceCIDRManager})
	return err
}
