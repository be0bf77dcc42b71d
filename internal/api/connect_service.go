package api

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/litek8s/litek8s/internal/kv"
)

// services/{[scheme:]name[:port]}/proxy/{path}: to a ready endpoint of
// the service's EndpointSlices, chosen at random (kube's service
// ResourceLocation). A port number names the service port that has it;
// otherwise the port is the service port's name ("" for an unnamed one).

func (s *Server) serviceProxy(w http.ResponseWriter, r *http.Request, q *request) error {
	scheme, name, port, ok := splitSchemeNamePort(q.name)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", q.name))
	}
	if n, err := strconv.ParseInt(port, 10, 64); err == nil {
		svc, err := getTyped[corev1.Service](r.Context(), s, q.res, q.namespace, name)
		if err != nil {
			return err
		}
		found := false
		for _, p := range svc.Spec.Ports {
			if int64(p.Port) == n {
				port, found = p.Name, true
				break
			}
		}
		if !found {
			return apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, name))
		}
	}
	hostPort, err := s.serviceEndpoint(r, q.namespace, name, port)
	if err != nil {
		return err
	}
	s.proxyTo(w, r, &url.URL{Scheme: scheme, Host: hostPort}, q.proxyPath, s.cfg.Kubelets.BackendTransport())
	return nil
}

// serviceEndpoint picks a ready pod endpoint of service name with the
// port named portName.
func (s *Server) serviceEndpoint(r *http.Request, namespace, name, portName string) (string, error) {
	res := s.registry().Lookup("discovery.k8s.io/v1", "endpointslices")
	if res == nil {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	l, err := s.store.List(r.Context(), res.StoreKey(), namespace, false)
	if err != nil {
		return "", availabilityErr(err)
	}
	var candidates []string
	l.Range("", func(obj *kv.Object) bool {
		var es discoveryv1.EndpointSlice
		if json.Unmarshal(obj.Raw, &es) != nil || es.Labels[discoveryv1.LabelServiceName] != name {
			return true
		}
		var port int32
		for _, p := range es.Ports {
			if p.Port != nil && p.Name != nil && *p.Name == portName || p.Port != nil && p.Name == nil && portName == "" {
				port = *p.Port
				break
			}
		}
		if port == 0 {
			return true
		}
		for _, ep := range es.Endpoints {
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			if !ready || len(ep.Addresses) == 0 || ep.TargetRef == nil || ep.TargetRef.Kind != "Pod" ||
				ep.TargetRef.Namespace != namespace {
				continue
			}
			candidates = append(candidates, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))))
		}
		return true
	})
	if len(candidates) == 0 {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	return candidates[rand.N(len(candidates))], nil
}
