package api

import (
	"context"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/crdvalidation"
	"github.com/litek8s/litek8s/internal/api/registry"
)

// Validation of what a write stores, in kube's order: on create the kind's
// rules (registry row Validate) and, when they pass, the generic metadata
// rules; on update the generic metadata rules (including the immutability
// of name, namespace, uid, creationTimestamp and the deletion fields, and
// no new finalizers on an object being deleted) followed by the kind's
// rules. Custom resources get metadata first, then their schema, as
// apiextensions does. Failures are a 422 Invalid naming the Kind.

var metadataPath = field.NewPath("metadata")

// validateCreate validates a new object of res.
func validateCreate(ctx context.Context, res *registry.Resource, obj runtime.Object) error {
	var errs field.ErrorList
	if res.Custom {
		errs = metaErrors(res, obj)
	}
	if res.Validate != nil {
		errs = append(errs, res.Validate(obj, nil)...)
	}
	errs = validateContext(ctx, res, obj, nil, errs)
	if len(errs) == 0 && !res.Custom {
		errs = metaErrors(res, obj)
	}
	return invalid(res, obj, errs)
}

// validateUpdate validates obj replacing old.
func validateUpdate(ctx context.Context, res *registry.Resource, obj, old runtime.Object) error {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return badRequest("the object has no metadata: %v", err)
	}
	om, err := apimeta.Accessor(old)
	if err != nil {
		return err
	}
	errs := validation.ValidateObjectMetaAccessor(m, res.Namespaced, pathSegmentName, metadataPath)
	errs = append(errs, validation.ValidateObjectMetaAccessorUpdate(m, om, metadataPath)...)
	if res.Validate != nil {
		errs = append(errs, res.Validate(obj, old)...)
	}
	return invalid(res, obj, validateContext(ctx, res, obj, old, errs))
}

// validateContext appends to errs what res.ValidateContext finds. A custom
// resource's rules are not evaluated when errs holds an error that blocks
// them: kube then says so instead.
func validateContext(ctx context.Context, res *registry.Resource, obj, old runtime.Object, errs field.ErrorList) field.ErrorList {
	if res.ValidateContext == nil {
		return errs
	}
	if res.Custom {
		if b := crdvalidation.Blocking(errs); b != nil {
			return append(errs, b)
		}
	}
	return append(errs, res.ValidateContext(ctx, obj, old)...)
}

// metaErrors checks names, labels, annotations, owner references,
// finalizers and managedFields of a new object.
func metaErrors(res *registry.Resource, obj runtime.Object) field.ErrorList {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(metadataPath, err)}
	}
	nameFn := validation.NameIsDNSSubdomain
	switch {
	case res.Resource == "namespaces" && res.Group == "":
		nameFn = validation.ValidateNamespaceName
	case res.Resource == "services" && res.Group == "": // kube's ValidateServiceName
		nameFn = validation.NameIsDNS1035Label
	case res.Group == "rbac.authorization.k8s.io": // kube's ValidateRBACName: system:… names
		nameFn = pathSegmentName
	case res.Resource == "ipaddresses" && res.Group == "networking.k8s.io":
		nameFn = registry.IPAddressName
	case res.Group == "apiregistration.k8s.io": // kube's APIService: <version>.<group>, "v1." for core
		nameFn = pathSegmentName
	case res.Group == "certificates.k8s.io" && res.Resource != "podcertificaterequests":
		// CSRs may be called anything; trust bundles check their own rule
		nameFn = pathSegmentName
	}
	return validation.ValidateObjectMetaAccessor(m, res.Namespaced, nameFn, metadataPath)
}

// pathSegmentName is kube's generic name rule (the name must be usable as
// a path segment); kinds check their own naming rules on create.
func pathSegmentName(name string, prefix bool) []string {
	return path.ValidatePathSegmentName(name, prefix)
}

// invalid is the 422 of errs (nil when there are none).
func invalid(res *registry.Resource, obj runtime.Object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	name := ""
	if m, err := apimeta.Accessor(obj); err == nil {
		name = m.GetName()
	}
	n := len(errs)
	if n <= maxInvalidCauses {
		return apierrors.NewInvalid(res.GVK().GroupKind(), name, errs)
	}
	se := apierrors.NewInvalid(res.GVK().GroupKind(), name, errs[:maxInvalidCauses])
	se.ErrStatus.Message += fmt.Sprintf(" (and %d more errors)", n-maxInvalidCauses)
	return se
}

// maxInvalidCauses bounds the causes of a 422. kube lists every one: a
// 3 MiB body of a million invalid finalizers would be answered with half
// a gigabyte of Status.
const maxInvalidCauses = 100
