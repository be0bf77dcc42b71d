package registry

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation of the networking.k8s.io/v1 kinds (see validate_core.go).

// validateIngress: a default backend or rules; each path with a path type
// and, for Exact and Prefix, an absolute path; each backend either a
// service (named, with a port name or number) or a resource.
func validateIngress(obj, _ runtime.Object) field.ErrorList {
	ing := obj.(*networkingv1.Ingress)
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if len(ing.Spec.Rules) == 0 && ing.Spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(spec, ing.Spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if b := ing.Spec.DefaultBackend; b != nil {
		errs = append(errs, validateIngressBackend(b, spec.Child("defaultBackend"))...)
	}
	if c := ing.Spec.IngressClassName; c != nil {
		for _, msg := range validation.NameIsDNSSubdomain(*c, false) {
			errs = append(errs, field.Invalid(spec.Child("ingressClassName"), *c, msg))
		}
	}
	for i, r := range ing.Spec.Rules {
		rule := spec.Child("rules").Index(i)
		if r.HTTP == nil {
			continue
		}
		paths := rule.Child("http", "paths")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(paths, ""))
		}
		for j, p := range r.HTTP.Paths {
			errs = append(errs, validateIngressPath(&p, paths.Index(j))...)
		}
	}
	return errs
}

func validateIngressPath(p *networkingv1.HTTPIngressPath, path *field.Path) field.ErrorList {
	if p.PathType == nil {
		return field.ErrorList{field.Required(path.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch t := *p.PathType; t {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
	case networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("pathType"), t, []string{"Exact", "ImplementationSpecific", "Prefix"}))
	}
	return append(errs, validateIngressBackend(&p.Backend, path.Child("backend"))...)
}

func validateIngressBackend(b *networkingv1.IngressBackend, path *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(path, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		var errs field.ErrorList
		if b.Resource.Kind == "" {
			errs = append(errs, field.Required(path.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			errs = append(errs, field.Required(path.Child("resource", "name"), ""))
		}
		return errs
	case b.Service == nil:
		return field.ErrorList{field.Invalid(path, "", "resource or service backend is required")}
	}
	var errs field.ErrorList
	svc := path.Child("service")
	if b.Service.Name == "" {
		errs = append(errs, field.Required(svc.Child("name"), ""))
	} else {
		for _, msg := range validation.NameIsDNS1035Label(b.Service.Name, false) {
			errs = append(errs, field.Invalid(svc.Child("name"), b.Service.Name, msg))
		}
	}
	switch port := b.Service.Port; {
	case port.Name != "" && port.Number != 0:
		errs = append(errs, field.Invalid(path, "", "cannot set both port name & port number"))
	case port.Name != "":
		for _, msg := range utilvalidation.IsValidPortName(port.Name) {
			errs = append(errs, field.Invalid(svc.Child("port", "name"), port.Name, msg))
		}
	case port.Number != 0:
		for _, msg := range utilvalidation.IsValidPortNum(int(port.Number)) {
			errs = append(errs, field.Invalid(svc.Child("port", "number"), port.Number, msg))
		}
	default:
		errs = append(errs, field.Required(path, "port name or number is required"))
	}
	return errs
}

// validateIngressClass: a domain-prefixed controller name that never
// changes.
func validateIngressClass(obj, old runtime.Object) field.ErrorList {
	ic := obj.(*networkingv1.IngressClass)
	controller := field.NewPath("spec", "controller")
	var errs field.ErrorList
	if prev, ok := old.(*networkingv1.IngressClass); ok {
		errs = append(errs, validation.ValidateImmutableField(ic.Spec.Controller, prev.Spec.Controller, controller)...)
	}
	if len(ic.Spec.Controller) > 250 {
		errs = append(errs, field.TooLong(controller, "", 250))
	}
	return append(errs, utilvalidation.IsDomainPrefixedPath(controller, ic.Spec.Controller)...)
}
