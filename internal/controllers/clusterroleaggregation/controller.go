package clusterroleaggregation

import (
	"context"
	"log/slog"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// Name is kube's name for the controller (its --controllers name and
// User-Agent suffix).
const Name = "clusterrole-aggregation"

// resource is the store's name of ClusterRoles.
const resource = "clusterroles.rbac.authorization.k8s.io"

// controller is the aggregation controller of one term.
type controller struct {
	client kubernetes.Interface
	roles  rbaclisters.ClusterRoleLister
	log    *slog.Logger
	loop   *kit.Loop // keys: names of aggregated ClusterRoles
}

// New returns the aggregation controller of the term of kc.
func New(kc *kit.Context, cfg Config) kit.Controller {
	inf := kit.Informer[rbacv1.ClusterRole, rbacv1.ClusterRoleList](kc.Informers, resource)
	c := &controller{client: kc.Client(Name), roles: rbaclisters.NewClusterRoleLister(inf.GetIndexer()),
		log: kc.Log.With("controller", Name)}
	c.loop = kit.NewLoop(kc, "ClusterRoleAggregator", cfg.LoopConfig, c.sync) // kube's queue name
	enqueue := func(any) { c.enqueueAggregated() }
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue})
	return c
}

// Name is kube-controller-manager's --controllers name for it.
func (c *controller) Name() string { return Name }

// Run works until ctx ends and returns once the workers have stopped.
func (c *controller) Run(ctx context.Context) { c.loop.Run(ctx) }

// enqueueAggregated queues every ClusterRole with an aggregationRule.
func (c *controller) enqueueAggregated() {
	all, err := c.roles.List(labels.Everything())
	if err != nil {
		c.log.Warn("list ClusterRoles", "err", err)
		return
	}
	for _, cr := range all {
		if cr.AggregationRule != nil {
			c.loop.Queue.Add(cr.Name)
		}
	}
}

// sync writes the aggregated rules of ClusterRole name when they differ
// from its stored rules.
func (c *controller) sync(ctx context.Context, name string) error {
	cr, err := c.roles.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cr.AggregationRule == nil {
		return nil
	}
	rules, err := c.aggregate(cr)
	if err != nil {
		c.log.Warn("invalid aggregationRule", "clusterrole", name, "err", err)
		return nil // validation refuses such selectors: nothing to retry
	}
	if equality.Semantic.DeepEqual(rules, cr.Rules) {
		return nil
	}
	cr = cr.DeepCopy()
	cr.Rules = rules
	_, err = c.client.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted since the informer showed it
	}
	return err // a conflict is retried with what the informer then holds
}

// aggregate returns the union of the rules of the ClusterRoles cr's
// selectors match: selector by selector, by role name, each rule once.
func (c *controller) aggregate(cr *rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	for i := range cr.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&cr.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		matched, err := c.roles.List(sel)
		if err != nil {
			return nil, err
		}
		sort.Slice(matched, func(a, b int) bool { return matched[a].Name < matched[b].Name })
		for _, m := range matched {
			if m.Name == cr.Name {
				continue
			}
			for _, r := range m.Rules {
				if !contains(rules, r) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, nil
}

// contains reports whether rules holds r.
func contains(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
	for i := range rules {
		if equality.Semantic.DeepEqual(rules[i], r) {
			return true
		}
	}
	return false
}
