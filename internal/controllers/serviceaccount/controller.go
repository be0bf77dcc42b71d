package serviceaccount

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is kube's client name for the controller (its User-Agent suffix).
const Name = "service-account-controller"

// Default is the name of the ServiceAccount every namespace holds.
const Default = "default"

// controller is the service account controller of one term.
type controller struct {
	cfg    Config
	client kubernetes.Interface
	ns     corelisters.NamespaceLister
	sa     corelisters.ServiceAccountLister
	log    *slog.Logger
	loop   *kit.Loop // keys: namespace names
}

// New returns the service account controller of the term of kc.
func New(kc *kit.Context, cfg Config) kit.Controller {
	nsInf, saInf := kc.Informers.Namespaces(), kc.Informers.ServiceAccounts()
	c := &controller{cfg: cfg, client: kc.Client(Name),
		ns:  corelisters.NewNamespaceLister(nsInf.GetIndexer()),
		sa:  corelisters.NewServiceAccountLister(saInf.GetIndexer()),
		log: kc.Log.With("controller", Name),
	}
	c.loop = kit.NewLoop(kc, Name, cfg.LoopConfig, c.sync)
	onNamespace := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceActive {
			c.loop.Queue.Add(ns.Name)
		}
	}
	nsInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onNamespace,
		UpdateFunc: func(_, obj any) { onNamespace(obj) },
	})
	saInf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if sa, ok := obj.(*corev1.ServiceAccount); ok && sa.Name == Default {
			c.loop.Queue.Add(sa.Namespace)
		}
	}})
	return c
}

// Name is kube-controller-manager's --controllers name for it.
func (c *controller) Name() string { return "serviceaccount" }

// Run works until ctx ends and returns once the workers have stopped.
func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// sync creates the "default" ServiceAccount of the Active namespace name
// when the informer does not hold it.
func (c *controller) sync(ctx context.Context, name string) error {
	ns, err := c.ns.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.Status.Phase != corev1.NamespaceActive {
		return nil
	}
	switch _, err := c.sa.ServiceAccounts(name).Get(Default); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: Default, Namespace: name}}
	_, err = c.client.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{})
	if gone(err) || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// gone: the namespace was deleted, or started terminating, after the
// informer showed it.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
