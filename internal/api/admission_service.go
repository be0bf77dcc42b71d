package api

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"slices"

	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// Service allocations, as kube's service REST storage and strategy do
// them: cluster IPs and node ports are kept while a service needs them,
// wiped when it changes to a type that does not (kube's
// dropTypeDependentFields), carried over when an update leaves them out
// (patchAllocatedValues) and allocated when it starts needing them.
// litek8s keeps no allocator table: an address or port is in use while a
// stored Service holds it, so removing it from the spec releases it.

// errNodePortAllocated is kube's portallocator.ErrAllocated.
const errNodePortAllocated = "provided port is already allocated"

// admitServiceCreate allocates the node ports (and health check node port)
// of a new service.
func (s *Server) admitServiceCreate(ctx context.Context, svc *corev1.Service) error {
	used, ips, err := s.serviceAllocations(ctx, svc)
	if err != nil {
		return err
	}
	if err := allocFreeClusterIP(svc, nil, ips); err != nil {
		return err
	}
	return allocNodePorts(svc, nil, used)
}

// admitServiceUpdate is kube's service update: the fields the new type
// does not use are wiped, the allocated values the client left out are
// carried over, and what the new type needs is allocated.
func (s *Server) admitServiceUpdate(ctx context.Context, svc, old *corev1.Service) error {
	dropTypeDependentFields(svc, old)
	patchAllocatedValues(svc, old)
	used, ips, err := s.serviceAllocations(ctx, svc)
	if err != nil {
		return err
	}
	if err := allocFreeClusterIP(svc, old, ips); err != nil {
		return err
	}
	return allocNodePorts(svc, old, used)
}

// admitUpdateFromStore runs the update-time admission that reads other
// objects: the allocations of an updated Service.
func (s *Server) admitUpdateFromStore(ctx context.Context, q *request, obj, old runtime.Object) error {
	svc, ok := obj.(*corev1.Service)
	prev, okOld := old.(*corev1.Service)
	if !ok || !okOld || q.subresource != "" {
		return nil
	}
	return s.admitServiceUpdate(ctx, svc, prev)
}

// serviceAllocations returns the node ports and cluster IPs held by the
// stored services other than svc.
func (s *Server) serviceAllocations(ctx context.Context, svc *corev1.Service) (map[int32]bool, map[string]bool, error) {
	l, err := s.store.List(ctx, "services", "", false)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to list services: %w", err)
	}
	used, ips := map[int32]bool{}, map[string]bool{}
	l.Range("", func(o *kv.Object) bool {
		md := gjson.GetBytes(o.Raw, "metadata")
		if md.Get("namespace").Str == svc.Namespace && md.Get("name").Str == svc.Name {
			return true
		}
		spec := gjson.GetBytes(o.Raw, "spec")
		for _, p := range spec.Get("ports.#.nodePort").Array() {
			used[int32(p.Int())] = true
		}
		if hc := spec.Get("healthCheckNodePort").Int(); hc != 0 {
			used[int32(hc)] = true
		}
		for _, ip := range spec.Get("clusterIPs").Array() {
			ips[ip.Str] = true
		}
		if ip := spec.Get("clusterIP").Str; ip != "" {
			ips[ip] = true
		}
		return true
	})
	delete(ips, corev1.ClusterIPNone)
	return used, ips, nil
}

// allocFreeClusterIP gives a service that needs a cluster IP one no other
// service holds (ips), or refuses the one it asks for when another holds
// it (422, kube's allocator message); svc's own in old stay its own.
func allocFreeClusterIP(svc, old *corev1.Service, ips map[string]bool) error {
	if !registry.NeedsClusterIP(svc) {
		return nil
	}
	sp := &svc.Spec
	asked := sp.ClusterIPs
	if len(asked) == 0 && sp.ClusterIP != "" {
		asked = []string{sp.ClusterIP}
	}
	for _, ip := range asked {
		if ip == corev1.ClusterIPNone || !ips[ip] || old != nil && slices.Contains(old.Spec.ClusterIPs, ip) {
			continue
		}
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), asked,
				"failed to allocate IP "+ip+": provided IP is already allocated")})
	}
	for try := 0; len(asked) == 0 && sp.ClusterIP == ""; try++ {
		if try == 1<<16 { // of 2^20 addresses
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
		}
		if ip := registry.RandomClusterIP(); !ips[ip] {
			sp.ClusterIP = ip
		}
	}
	registry.AllocClusterIP(sp)
	return nil
}

// allocNodePorts gives every port of svc that needs one a node port
// (kube's initNodePorts/updateNodePorts): a requested one must be free
// (or svc's own in old), ports with the same port number share one. It
// also allocates the health check node port of a LoadBalancer service
// with the Local external traffic policy.
func allocNodePorts(svc, old *corev1.Service, used map[int32]bool) error {
	own := map[int32]bool{}
	if old != nil {
		for _, p := range old.Spec.Ports {
			own[p.NodePort] = true
		}
		own[old.Spec.HealthCheckNodePort] = true
	}
	taken := func(np int32) bool { return used[np] && !own[np] }
	ports := field.NewPath("spec", "ports")
	if needsNodePort(svc) {
		byPort := map[int32]int32{}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 && !shouldAllocateNodePorts(svc) {
				continue
			}
			switch {
			case p.NodePort != 0:
				if taken(p.NodePort) {
					return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name,
						field.ErrorList{field.Invalid(ports.Index(i).Child("nodePort"), p.NodePort, errNodePortAllocated)})
				}
			case byPort[p.Port] != 0:
				p.NodePort = byPort[p.Port]
			default:
				np, err := nextNodePort(used)
				if err != nil {
					return err
				}
				p.NodePort = np
			}
			used[p.NodePort] = true
			byPort[p.Port] = p.NodePort
		}
	}
	if needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		np, err := nextNodePort(used)
		if err != nil {
			return err
		}
		svc.Spec.HealthCheckNodePort = np
	}
	return nil
}

// nextNodePort picks a free port of the range at random (kube's
// AllocateNext scans from a random offset).
func nextNodePort(used map[int32]bool) (int32, error) {
	start, err := rand.Int(rand.Reader, big.NewInt(registry.NodePortSize))
	if err != nil {
		return 0, err
	}
	for i := range int32(registry.NodePortSize) {
		np := registry.NodePortBase + (int32(start.Int64())+i)%registry.NodePortSize
		if !used[np] {
			return np, nil
		}
	}
	return 0, apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
}

// dropTypeDependentFields is kube's: on a change to a type that does not
// use them, the cluster IPs, IP families, node ports, health check node
// port, allocateLoadBalancerNodePorts, loadBalancerClass and external
// traffic policy the client left as they were are wiped.
func dropTypeDependentFields(svc, old *corev1.Service) {
	sp, op := &svc.Spec, &old.Spec
	if registry.NeedsClusterIP(old) && !registry.NeedsClusterIP(svc) {
		if sp.ClusterIP == op.ClusterIP && slices.Equal(sp.ClusterIPs, op.ClusterIPs) {
			sp.ClusterIP, sp.ClusterIPs = "", nil
		}
		if slices.Equal(sp.IPFamilies, op.IPFamilies) {
			sp.IPFamilies = nil
		}
		if ptr.Equal(sp.IPFamilyPolicy, op.IPFamilyPolicy) {
			sp.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(old) && !needsNodePort(svc) && sameNodePorts(svc, old) {
		for i := range sp.Ports {
			sp.Ports[i].NodePort = 0
		}
	}
	if needsHCNodePort(old) && !needsHCNodePort(svc) && sp.HealthCheckNodePort == op.HealthCheckNodePort {
		sp.HealthCheckNodePort = 0
	}
	if op.Type == corev1.ServiceTypeLoadBalancer && sp.Type != corev1.ServiceTypeLoadBalancer {
		if sp.AllocateLoadBalancerNodePorts != nil && ptr.Equal(sp.AllocateLoadBalancerNodePorts, op.AllocateLoadBalancerNodePorts) {
			sp.AllocateLoadBalancerNodePorts = nil
		}
		if ptr.Equal(sp.LoadBalancerClass, op.LoadBalancerClass) {
			sp.LoadBalancerClass = nil
		}
	}
	if registry.ExternallyAccessible(old) && !registry.ExternallyAccessible(svc) && sp.ExternalTrafficPolicy == op.ExternalTrafficPolicy {
		sp.ExternalTrafficPolicy = ""
	}
}

// patchAllocatedValues is kube's: the cluster IPs, node ports (by port
// name) and health check node port an update leaves out keep their
// allocated values while the service still needs them.
func patchAllocatedValues(svc, old *corev1.Service) {
	sp, op := &svc.Spec, &old.Spec
	if registry.NeedsClusterIP(old) && registry.NeedsClusterIP(svc) {
		if sp.ClusterIP == "" {
			sp.ClusterIP = op.ClusterIP
		}
		if len(sp.ClusterIPs) == 0 {
			sp.ClusterIPs = op.ClusterIPs
		}
	}
	if needsNodePort(old) && needsNodePort(svc) {
		inNew := map[int32]bool{}
		for _, p := range sp.Ports {
			inNew[p.NodePort] = true
		}
		byName := map[string]int32{}
		for _, p := range op.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range sp.Ports {
			if p := &sp.Ports[i]; p.NodePort == 0 && !inNew[byName[p.Name]] {
				p.NodePort = byName[p.Name]
			}
		}
	}
	if needsHCNodePort(old) && needsHCNodePort(svc) && sp.HealthCheckNodePort == 0 {
		sp.HealthCheckNodePort = op.HealthCheckNodePort
	}
}

// sameNodePorts: svc adds no node port that old does not have.
func sameNodePorts(svc, old *corev1.Service) bool {
	had := map[int32]bool{}
	for _, p := range old.Spec.Ports {
		had[p.NodePort] = true
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 && !had[p.NodePort] {
			return false
		}
	}
	return true
}

func needsNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

// shouldAllocateNodePorts: a LoadBalancer may opt out of node ports.
func shouldAllocateNodePorts(svc *corev1.Service) bool {
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return svc.Spec.Type == corev1.ServiceTypeNodePort
}

func needsHCNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}
