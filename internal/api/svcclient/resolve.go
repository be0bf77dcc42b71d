package svcclient

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/litek8s/litek8s/internal/kv"
)

// Reader reads the member's local store (the API server's Store satisfies
// it). Resolution reads without the read index: like kube's informers, it
// may lag the leader by the apply delay.
type Reader interface {
	Get(ctx context.Context, k kv.Key, consistent bool) (*kv.Object, uint64, error)
	List(ctx context.Context, resource, namespace string, consistent bool) (*kv.List, error)
}

// ServiceRef names a Service port: admissionregistration's and
// apiextensions' ServiceReference, apiregistration's ServiceReference.
type ServiceRef struct {
	Namespace, Name string
	// Port is the Service's port (kube's default for webhooks: 443).
	Port int32
	// Path is the URL path (webhooks; empty for aggregated APIs).
	Path string
}

// ServerName is the TLS server name kube verifies for a Service:
// <name>.<namespace>.svc.
func (r ServiceRef) ServerName() string { return r.Name + "." + r.Namespace + ".svc" }

// Resolve returns host:port of a ready endpoint of the Service's port (an
// ExternalName Service resolves to its external name). It answers kube's
// 503 ServiceUnavailable errors when the Service is missing or has no
// ready endpoint.
func Resolve(ctx context.Context, rd Reader, ref ServiceRef) (string, error) {
	obj, _, err := rd.Get(ctx, kv.Key{Resource: "services", Namespace: ref.Namespace, Name: ref.Name}, false)
	if err != nil {
		return "", resolveError(ReasonServiceNotFound, fmt.Sprintf("service %q not found", ref.Namespace+"/"+ref.Name))
	}
	var svc corev1.Service
	if err := json.Unmarshal(obj.Raw, &svc); err != nil {
		return "", err
	}
	var port *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == ref.Port {
			port = &svc.Spec.Ports[i]
			break
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(ref.Port))), nil
	}
	if port == nil {
		return "", resolveError(ReasonServicePortError, fmt.Sprintf("service %q has no port %d", ref.Namespace+"/"+ref.Name, ref.Port))
	}
	l, err := rd.List(ctx, "endpointslices.discovery.k8s.io", ref.Namespace, false)
	if err != nil {
		return "", err
	}
	var ready []string
	l.Range("", func(o *kv.Object) bool {
		if o.Labels.Get(discoveryv1.LabelServiceName) != ref.Name {
			return true
		}
		var es discoveryv1.EndpointSlice
		if json.Unmarshal(o.Raw, &es) != nil {
			return true
		}
		ready = append(ready, readyAddresses(&es, port)...)
		return true
	})
	if len(ready) == 0 {
		return "", resolveError(ReasonMissingEndpoints, fmt.Sprintf("no endpoints available for service %q", ref.Namespace+"/"+ref.Name))
	}
	return ready[rand.IntN(len(ready))], nil
}

// readyAddresses returns host:port of the ready endpoints of es for the
// Service port p (matched by name, as the EndpointSlice controller names
// the slice's ports after the Service's).
func readyAddresses(es *discoveryv1.EndpointSlice, p *corev1.ServicePort) []string {
	var num int32 = -1
	for _, sp := range es.Ports {
		if sp.Port != nil && (sp.Name == nil && p.Name == "" || sp.Name != nil && *sp.Name == p.Name) {
			num = *sp.Port
		}
	}
	if num < 0 && p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal > 0 && len(es.Ports) == 0 {
		num = p.TargetPort.IntVal
	}
	if num < 0 {
		return nil
	}
	var out []string
	for _, ep := range es.Endpoints {
		if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
			continue
		}
		out = append(out, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(num))))
	}
	return out
}

// Why a Service does not resolve: kube's APIService availability reasons.
const (
	ReasonServiceNotFound  = "ServiceNotFound"
	ReasonServicePortError = "ServicePortError"
	ReasonMissingEndpoints = "MissingEndpoints"
)

// ResolveError is a Service that did not resolve: kube's 503
// ServiceUnavailable (apierrors.IsServiceUnavailable holds), with Reason
// one of the Reason* constants.
type ResolveError struct {
	*apierrors.StatusError
	Reason string
}

func resolveError(reason, msg string) error {
	return &ResolveError{StatusError: apierrors.NewServiceUnavailable(msg), Reason: reason}
}
