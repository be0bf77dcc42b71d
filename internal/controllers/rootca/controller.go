package rootca

import (
	"context"
	"log/slog"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is kube's client name for the controller (its User-Agent suffix).
const Name = "root-ca-cert-publisher"

// What the controller publishes, as kube words it.
const (
	// ConfigMapName is the ConfigMap every namespace holds.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey is its one data key.
	DataKey = "ca.crt"
	// DescriptionAnnotation and Description describe it.
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// controller is the root CA publisher of one term.
type controller struct {
	cfg    Config
	data   map[string]string // the published data; never modified
	client kubernetes.Interface
	ns     corelisters.NamespaceLister
	cms    corelisters.ConfigMapLister
	log    *slog.Logger
	loop   *kit.Loop // keys: namespace names
}

// New returns the root CA publisher of the term of kc; rootCA is the
// cluster CA certificate (PEM) it publishes.
func New(kc *kit.Context, cfg Config, rootCA []byte) kit.Controller {
	// Only the ConfigMaps named kube-root-ca.crt: the others are never
	// decoded or cached.
	nsInf, cmInf := kc.Informers.Namespaces(), kc.Informers.ConfigMapsNamed(ConfigMapName)
	c := &controller{cfg: cfg, client: kc.Client(Name),
		ns:  corelisters.NewNamespaceLister(nsInf.GetIndexer()),
		cms: corelisters.NewConfigMapLister(cmInf.GetIndexer()),
		log: kc.Log.With("controller", Name),
	}
	c.loop = kit.NewLoop(kc, Name, cfg.LoopConfig, c.sync)
	if len(rootCA) > 0 {
		c.data = map[string]string{DataKey: string(rootCA)}
	}
	onNamespace := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceActive {
			c.loop.Queue.Add(ns.Name)
		}
	}
	nsInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onNamespace,
		UpdateFunc: func(_, obj any) { onNamespace(obj) },
	})
	onConfigMap := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == ConfigMapName {
			c.loop.Queue.Add(cm.Namespace)
		}
	}
	cmInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { onConfigMap(obj) },
		DeleteFunc: onConfigMap,
	})
	return c
}

// Name is kube-controller-manager's --controllers name for it.
func (c *controller) Name() string { return "root-ca-cert-publisher" }

// Run works until ctx ends and returns once the workers have stopped.
// Without a CA it publishes nothing.
func (c *controller) Run(ctx context.Context) {
	if c.data == nil {
		c.log.Warn("no cluster CA: kube-root-ca.crt is not published")
		<-ctx.Done()
		c.loop.Queue.ShutDown()
		return
	}
	c.loop.Run(ctx)
}

// sync makes the kube-root-ca.crt of the Active namespace name what it
// should be: created when missing, its data and description rewritten
// when they differ.
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
	cm, err := c.cms.ConfigMaps(name).Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: name,
			Annotations: map[string]string{DescriptionAnnotation: Description}}, Data: c.data}
		_, err = c.client.CoreV1().ConfigMaps(name).Create(ctx, cm, metav1.CreateOptions{})
		if gone(err) {
			return nil
		}
		return err // AlreadyExists too: the retry compares what the informer then holds
	case err != nil:
		return err
	case maps.Equal(cm.Data, c.data) && cm.Annotations[DescriptionAnnotation] != "":
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = c.data
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	_, err = c.client.CoreV1().ConfigMaps(name).Update(ctx, cm, metav1.UpdateOptions{})
	if gone(err) {
		return nil
	}
	return err
}

// gone: the ConfigMap or its namespace was deleted, or the namespace
// started terminating, after the informer showed them.
func gone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
