package registry

import (
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateServiceCIDR: one or two CIDRs, one of each IP family. They never
// change, except that a single-stack range may gain its second family
// (kube's ValidateServiceCIDR and ValidateServiceCIDRUpdate).
func validateServiceCIDR(obj, old runtime.Object) field.ErrorList {
	sc := obj.(*networkingv1.ServiceCIDR)
	cidrs := field.NewPath("spec", "cidrs")
	prev, ok := old.(*networkingv1.ServiceCIDR)
	if !ok {
		return serviceCIDRSpec(sc.Spec.CIDRs, cidrs)
	}
	var errs field.ErrorList
	switch was, is := prev.Spec.CIDRs, sc.Spec.CIDRs; {
	case len(was) == len(is):
		for i := range was {
			if was[i] != is[i] {
				errs = append(errs, field.Invalid(cidrs.Index(i), is[i], validation.FieldImmutableErrorMsg))
			}
		}
	case len(was) == 1 && len(is) == 2:
		if is[0] != was[0] {
			errs = append(errs, field.Invalid(cidrs.Index(0), is[0], validation.FieldImmutableErrorMsg))
		}
		errs = append(errs, serviceCIDRSpec(is, cidrs)...)
	default:
		errs = append(errs, field.Invalid(cidrs, is, validation.FieldImmutableErrorMsg))
	}
	return errs
}

func serviceCIDRSpec(cidrs []string, fld *field.Path) field.ErrorList {
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(fld, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(fld, cidrs, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, utilvalidation.IsValidCIDR(fld.Index(i), c)...)
	}
	if len(errs) == 0 && len(cidrs) == 2 && is4(cidrs[0]) == is4(cidrs[1]) {
		errs = append(errs, field.Invalid(fld, cidrs,
			"may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
	}
	return errs
}

// is4 reports whether a valid CIDR is an IPv4 one.
func is4(cidr string) bool {
	p, err := netip.ParsePrefix(cidr)
	return err == nil && p.Addr().Is4()
}

// validateIPAddress: a parent reference (resource and name required) that
// never changes. The name, the address itself, is checked as
// ipAddressName.
func validateIPAddress(obj, old runtime.Object) field.ErrorList {
	ip := obj.(*networkingv1.IPAddress)
	ref := field.NewPath("spec", "parentRef")
	if prev, ok := old.(*networkingv1.IPAddress); ok {
		return validation.ValidateImmutableField(ip.Spec.ParentRef, prev.Spec.ParentRef, ref)
	}
	p := ip.Spec.ParentRef
	if p == nil {
		return field.ErrorList{field.Required(ref, "")}
	}
	var errs field.ErrorList
	if p.Group != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(p.Group) {
			errs = append(errs, field.Invalid(ref.Child("group"), p.Group, msg))
		}
	}
	for _, f := range []struct {
		name, value string
		required    bool
	}{{"resource", p.Resource, true}, {"name", p.Name, true}, {"namespace", p.Namespace, false}} {
		if f.value == "" {
			if f.required {
				errs = append(errs, field.Required(ref.Child(f.name), ""))
			}
			continue
		}
		for _, msg := range path.IsValidPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(ref.Child(f.name), f.value, msg))
		}
	}
	return errs
}

// IPAddressName is kube's ValidateIPAddressName: an IPAddress is named by
// its address, in canonical form.
func IPAddressName(name string, _ bool) []string {
	var msgs []string
	for _, err := range utilvalidation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, err.Detail)
	}
	return msgs
}
