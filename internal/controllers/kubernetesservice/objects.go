package kubernetesservice

import (
	"cmp"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The objects the controller writes, as kube-apiserver writes them.
const (
	// ServiceName is the name of the Service, its Endpoints and its first
	// EndpointSlice, in the default namespace.
	ServiceName = "kubernetes"
	// Namespace is where they live.
	Namespace = metav1.NamespaceDefault
	// PortName and Port are the Service's one port.
	PortName = "https"
	Port     = 443
	// skipMirrorLabel keeps an EndpointSlice mirroring controller away
	// from the Endpoints (kube sets it).
	skipMirrorLabel = "endpointslice.kubernetes.io/skip-mirror"
)

// Member is one member as the leader sees it.
type Member struct {
	// APIURL is its advertised API URL ("https://host:port").
	APIURL string
	// Self is the member running the controller (the leader).
	Self bool
	// LastReport is when it last reported to the leader in this term
	// (zero: not yet).
	LastReport time.Time
}

// Members lists the cluster's members (raftstore's configuration and lag
// reports, on the leader).
type Members interface {
	APIMembers() ([]Member, error)
}

// endpoint is one serving API address.
type endpoint struct {
	ip   string
	port int32
}

// serving returns the endpoints of the members serving at now: the
// leader, members that reported within ttl, and members that have not
// reported yet in a term younger than ttl (a new leader has heard from
// nobody). Addresses that are not IP literals are left out.
func serving(ms []Member, now, termStart time.Time, ttl time.Duration) []endpoint {
	var out []endpoint
	for _, m := range ms {
		alive := m.Self || now.Sub(m.LastReport) <= ttl || (m.LastReport.IsZero() && now.Sub(termStart) <= ttl)
		if !alive {
			continue
		}
		if e, ok := parseEndpoint(m.APIURL); ok && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// selfPort is the API port of the member running the controller.
func selfPort(ms []Member) (int32, bool) {
	for _, m := range ms {
		if !m.Self {
			continue
		}
		u, err := url.Parse(m.APIURL)
		if err != nil {
			return 0, false
		}
		port, err := strconv.ParseUint(u.Port(), 10, 16)
		return int32(port), err == nil && port > 0
	}
	return 0, false
}

func parseEndpoint(apiURL string) (endpoint, bool) {
	u, err := url.Parse(apiURL)
	if err != nil {
		return endpoint{}, false
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return endpoint{}, false
	}
	port, err := strconv.ParseUint(u.Port(), 10, 16)
	if err != nil || port == 0 {
		return endpoint{}, false
	}
	return endpoint{ip: ip.String(), port: int32(port)}, true
}

// group is the addresses of one API port, sorted.
type group struct {
	port int32
	ips  []string
}

// groups splits eps by port: the largest group first (its port is the
// Service's targetPort), then by port.
func groups(eps []endpoint) []group {
	byPort := map[int32][]string{}
	for _, e := range eps {
		byPort[e.port] = append(byPort[e.port], e.ip)
	}
	var out []group
	for _, p := range slices.Sorted(maps.Keys(byPort)) {
		ips := byPort[p]
		slices.Sort(ips)
		out = append(out, group{port: p, ips: ips})
	}
	slices.SortStableFunc(out, func(a, b group) int { return cmp.Compare(len(b.ips), len(a.ips)) })
	return out
}

// desiredService is the Service kube-apiserver creates.
func desiredService(ip string, targetPort int32) *corev1.Service {
	single := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName, Namespace: Namespace,
			Labels: map[string]string{"provider": "kubernetes", "component": "apiserver"}},
		Spec: corev1.ServiceSpec{Ports: servicePorts(targetPort), ClusterIP: ip, IPFamilyPolicy: &single,
			SessionAffinity: corev1.ServiceAffinityNone, Type: corev1.ServiceTypeClusterIP},
	}
}

func servicePorts(targetPort int32) []corev1.ServicePort {
	return []corev1.ServicePort{{Name: PortName, Protocol: corev1.ProtocolTCP, Port: Port,
		TargetPort: intstr.FromInt32(targetPort)}}
}

// desiredSubsets are the Endpoints' subsets: one per port group.
func desiredSubsets(gs []group) []corev1.EndpointSubset {
	var out []corev1.EndpointSubset
	for _, g := range gs {
		s := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: PortName, Port: g.port, Protocol: corev1.ProtocolTCP}}}
		for _, ip := range g.ips {
			s.Addresses = append(s.Addresses, corev1.EndpointAddress{IP: ip})
		}
		out = append(out, s)
	}
	return out
}

// sliceName is the name of group i's EndpointSlice.
func sliceName(gs []group, i int) string {
	if i == 0 {
		return ServiceName
	}
	return ServiceName + "-" + strconv.Itoa(int(gs[i].port))
}

// desiredSlice is group i's EndpointSlice, as kube's endpoints adapter
// derives it from the Endpoints.
func desiredSlice(gs []group, i int) *discoveryv1.EndpointSlice {
	g := gs[i]
	name, proto, port := PortName, corev1.ProtocolTCP, g.port
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: sliceName(gs, i), Namespace: Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: ServiceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}},
	}
	if allIPv6(g.ips) {
		s.AddressType = discoveryv1.AddressTypeIPv6
	}
	for _, ip := range g.ips {
		ready := true
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
	}
	return s
}

func allIPv6(ips []string) bool {
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err != nil || !a.Is6() {
			return false
		}
	}
	return len(ips) > 0
}
