package controllers

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/controllers/clusterroleaggregation"
	"github.com/litek8s/litek8s/internal/controllers/endpoints"
	"github.com/litek8s/litek8s/internal/controllers/kit"
	"github.com/litek8s/litek8s/internal/controllers/kubernetesservice"
	"github.com/litek8s/litek8s/internal/controllers/namespace"
	"github.com/litek8s/litek8s/internal/controllers/rootca"
	"github.com/litek8s/litek8s/internal/controllers/serviceaccount"
	"github.com/litek8s/litek8s/internal/controllers/volumeprotection"
)

// cluster builds the term's namespace, endpoints/endpointslices, volume
// protection, service account and root CA publisher controllers, and the
// default/kubernetes Service's when members is set.
// resources lists the served resources (the namespace controller deletes
// the objects of every namespaced one); rootCA is the cluster CA
// certificate (PEM) published in every namespace; restConfig is a
// controller's in-process client configuration; members lists the
// members whose API addresses the kubernetes Service lists.
func cluster(kc *kit.Context, cfg Config, resources Resources, rootCA []byte, restConfig func(string) *rest.Config,
	members kubernetesservice.Members) []kit.Controller {
	dyn, err := dynamic.NewForConfig(restConfig(namespace.Name))
	if err != nil { // only a malformed rest.Config fails, and ours is fixed
		panic("controllers: namespace controller client: " + err.Error())
	}
	out := []kit.Controller{
		namespace.New(kc, cfg.Cluster.Namespace, namespacedResources(resources), dyn),
		endpoints.New(kc, cfg.Cluster.Endpoints),
		endpoints.NewSlices(kc, cfg.Cluster.Endpoints),
		volumeprotection.New(kc, cfg.Cluster.VolumeProtection),
		volumeprotection.NewPV(kc, cfg.Cluster.VolumeProtection),
		serviceaccount.New(kc, cfg.Cluster.ServiceAccount),
		rootca.New(kc, cfg.Cluster.RootCA, rootCA),
		clusterroleaggregation.New(kc, cfg.Cluster.ClusterRoleAggregation),
	}
	if members != nil {
		out = append(out, kubernetesservice.New(kc, cfg.Cluster.KubernetesService, members))
	}
	return out
}

// namespacedResources adapts resources to what the namespace controller
// wants.
func namespacedResources(resources Resources) namespace.Resources {
	return func(ctx context.Context) []schema.GroupVersionResource {
		var out []schema.GroupVersionResource
		for _, r := range resources(ctx) {
			if r.Namespaced {
				out = append(out, r.GVR)
			}
		}
		return out
	}
}

// ClusterConfig configures them.
type ClusterConfig struct {
	Namespace namespace.Config
	// Endpoints configures the Endpoints and EndpointSlice controllers.
	Endpoints endpoints.Config
	// VolumeProtection configures the claim and volume protection
	// controllers.
	VolumeProtection volumeprotection.Config
	// ServiceAccount configures the service account controller (the
	// "default" ServiceAccount of every namespace).
	ServiceAccount serviceaccount.Config
	// RootCA configures the root CA publisher (kube-root-ca.crt in every
	// namespace).
	RootCA rootca.Config
	// KubernetesService configures the default/kubernetes Service's
	// controller.
	KubernetesService kubernetesservice.Config
	// ClusterRoleAggregation configures the ClusterRole aggregation
	// controller.
	ClusterRoleAggregation clusterroleaggregation.Config
}

func defaultCluster() ClusterConfig {
	return ClusterConfig{Namespace: namespace.DefaultConfig(), Endpoints: endpoints.DefaultConfig(),
		VolumeProtection: volumeprotection.DefaultConfig(), ServiceAccount: serviceaccount.DefaultConfig(),
		RootCA: rootca.DefaultConfig(), KubernetesService: kubernetesservice.DefaultConfig(),
		ClusterRoleAggregation: clusterroleaggregation.DefaultConfig()}
}

func (c *ClusterConfig) validate() error {
	return errors.Join(c.Namespace.Validate(), c.Endpoints.Validate(), c.VolumeProtection.Validate(),
		c.ServiceAccount.Validate(), c.RootCA.Validate(), c.KubernetesService.Validate(), c.ClusterRoleAggregation.Validate())
}
