package registry

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregvalidation "k8s.io/kube-aggregator/pkg/apis/apiregistration/validation"
)

// apiregistrationKinds is apiregistration.k8s.io/v1: APIServices
// (cluster-scoped, with a status subresource the leader's available
// controller writes). An APIService with a service is proxied by
// internal/api/aggregator; one without is Local (a built-in or CRD group).
func apiregistrationKinds() []*Resource {
	return []*Resource{{Group: apiregv1.GroupName, Version: "v1", Resource: "apiservices", Singular: "apiservice",
		Kind: "APIService", Categories: []string{"api-extensions"}, Status: true,
		New: NewOf[apiregv1.APIService](), NewList: NewOf[apiregv1.APIServiceList](),
		Normalize: func(obj runtime.Object) { apiregv1.SetObjectDefaults_APIService(obj.(*apiregv1.APIService)) },
		Validate:  validateAPIService}}
}

// validateAPIService runs kube-aggregator's own validation (on its
// internal type, as kube does) on create and update.
func validateAPIService(obj, old runtime.Object) field.ErrorList {
	in, err := internalAPIService(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := apiregvalidation.ValidateAPIService(context.Background(), in)
	if old != nil {
		errs = append(errs, apiregvalidation.ValidateAPIServiceStatus(&in.Status, field.NewPath("status"))...)
	}
	// The generic path checked metadata (and the name as a path segment)
	// already: keep kube's own rule for the name only.
	out := errs[:0]
	for _, e := range errs {
		if !strings.HasPrefix(e.Field, "metadata") || e.Field == "metadata.name" && strings.HasPrefix(e.Detail, "must be `spec.version") {
			out = append(out, e)
		}
	}
	return out
}

func internalAPIService(obj runtime.Object) (*apiregistration.APIService, error) {
	out := &apiregistration.APIService{}
	err := apiregv1.Convert_v1_APIService_To_apiregistration_APIService(obj.(*apiregv1.APIService), out, nil)
	return out, err
}
