package apiservice

import (
	"context"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is the controller's name.
const Name = "apiservice-controller"

// AutoManagedLabel marks the Local APIServices this controller keeps
// (kube's autoregister label; "onstart" for built-in group/versions,
// "true" for CRDs').
const AutoManagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// Checker is the availability check of an APIService (the aggregator's
// Check): the Available condition's status, reason and message.
type Checker func(ctx context.Context, svc *apiregv1.APIService) (apiregv1.ConditionStatus, string, string)

// Served lists the group/versions the API serves itself, each with
// whether it is built in (not from a CRD).
type Served func(ctx context.Context) map[schema.GroupVersion]bool

// Options are the controller's collaborators.
type Options struct {
	Client aggregatorclient.Interface
	Check  Checker
	Served Served
	// GroupPriority is a built-in group's groupPriorityMinimum.
	GroupPriority func(group string) int32
	Logger        *slog.Logger
	Now           func() time.Time
}

type controller struct {
	cfg  Config
	opts Options
	log  *slog.Logger
}

// New returns the controller.
func New(kc *kit.Context, cfg Config, opts Options) kit.Controller {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &controller{cfg: cfg, opts: opts, log: kc.Log.With("controller", Name)}
}

func (c *controller) Name() string { return Name }

// Run syncs every Interval until ctx ends.
func (c *controller) Run(ctx context.Context) {
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	for {
		if err := c.sync(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("syncing APIServices", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *controller) sync(ctx context.Context) error {
	api := c.opts.Client.ApiregistrationV1().APIServices()
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	have := map[string]*apiregv1.APIService{}
	for i := range list.Items {
		have[list.Items[i].Name] = &list.Items[i]
	}
	served := c.opts.Served(ctx)
	for gv, builtin := range served {
		name := gv.Version + "." + gv.Group
		if have[name] != nil {
			continue
		}
		created, err := api.Create(ctx, c.local(gv, builtin), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err == nil {
			have[name] = created
		}
	}
	for name, svc := range have {
		gv := schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version}
		if _, ok := served[gv]; !ok && svc.Labels[AutoManagedLabel] == "true" && svc.Spec.Service == nil {
			// The Local APIService of a CRD version that is gone.
			if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			continue
		}
		if err := c.updateAvailable(ctx, svc); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// local is the Local APIService of gv, with kube's priorities (a CRD
// group's: 1000 and 100).
func (c *controller) local(gv schema.GroupVersion, builtin bool) *apiregv1.APIService {
	group, version, label := int32(1000), int32(100), "true"
	if builtin {
		group, version, label = c.opts.GroupPriority(gv.Group), 15, "onstart"
		switch {
		case gv.Group == "":
			version = 1
		case gv.Group == "flowcontrol.apiserver.k8s.io":
			version = 21
		}
	}
	return &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group,
		Labels: map[string]string{AutoManagedLabel: label}},
		Spec: apiregv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: group, VersionPriority: version}}
}

// updateAvailable writes svc's Available condition when the check says
// something else than it holds.
func (c *controller) updateAvailable(ctx context.Context, svc *apiregv1.APIService) error {
	status, reason, message := c.opts.Check(ctx, svc)
	if ctx.Err() != nil {
		return nil
	}
	cond := apiregv1.APIServiceCondition{Type: apiregv1.Available, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(c.opts.Now())}
	conds := svc.Status.Conditions
	i := 0
	for ; i < len(conds) && conds[i].Type != apiregv1.Available; i++ {
	}
	if i < len(conds) {
		old := conds[i]
		if old.Status == status && old.Reason == reason && old.Message == message {
			return nil
		}
		if old.Status == status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
	}
	svc = svc.DeepCopy()
	if i < len(conds) {
		svc.Status.Conditions[i] = cond
	} else {
		svc.Status.Conditions = append(svc.Status.Conditions, cond)
	}
	_, err := c.opts.Client.ApiregistrationV1().APIServices().UpdateStatus(ctx, svc, metav1.UpdateOptions{})
	return err
}
