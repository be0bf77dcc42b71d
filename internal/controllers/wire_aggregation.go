package controllers

import (
	"k8s.io/client-go/rest"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/litek8s/litek8s/internal/controllers/apiservice"
	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// APIServices are what the APIService controller needs from the API:
// the aggregator's availability check, the group/versions served here and
// the built-in groups' priorities.
type APIServices struct {
	Check         apiservice.Checker
	Served        apiservice.Served
	GroupPriority func(group string) int32
}

// aggregation builds the APIService controller (autoregister and
// available) when a is set.
func aggregation(kc *kit.Context, cfg Config, a *APIServices, restConfig func(string) *rest.Config) []kit.Controller {
	if a == nil {
		return nil
	}
	client, err := aggregatorclient.NewForConfig(restConfig(apiservice.Name))
	if err != nil { // only a malformed rest.Config fails, and ours is fixed
		panic("controllers: apiservice client: " + err.Error())
	}
	return []kit.Controller{apiservice.New(kc, cfg.APIService, apiservice.Options{Client: client, Check: a.Check,
		Served: a.Served, GroupPriority: a.GroupPriority})}
}
