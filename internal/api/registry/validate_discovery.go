package registry

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateEndpointSlice: a supported address type that never changes and
// endpoints with 1 to 100 addresses.
func validateEndpointSlice(obj, old runtime.Object) field.ErrorList {
	eps := obj.(*discoveryv1.EndpointSlice)
	var errs field.ErrorList
	at := field.NewPath("addressType")
	switch eps.AddressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
	case "":
		errs = append(errs, field.Required(at, ""))
	default:
		errs = append(errs, field.NotSupported(at, eps.AddressType,
			[]discoveryv1.AddressType{discoveryv1.AddressTypeFQDN, discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}))
	}
	if prev, ok := old.(*discoveryv1.EndpointSlice); ok {
		errs = append(errs, validation.ValidateImmutableField(eps.AddressType, prev.AddressType, at)...)
	}
	for i, e := range eps.Endpoints {
		addrs := field.NewPath("endpoints").Index(i).Child("addresses")
		switch n := len(e.Addresses); {
		case n == 0:
			errs = append(errs, field.Required(addrs, "must contain at least 1 address"))
		case n > 100:
			errs = append(errs, field.TooMany(addrs, n, 100))
		}
	}
	return errs
}
