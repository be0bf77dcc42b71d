package endpoints

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// port is one service port resolved on a pod.
type port struct {
	name        string
	port        int32
	protocol    corev1.Protocol
	appProtocol *string
}

// endpoint is one pod backing a service, as both controllers see it.
type endpoint struct {
	pod *corev1.Pod
	ip  string
	// ready: Ready and not terminating (or the service publishes
	// not-ready addresses); serving: Ready, terminating or not.
	ready, serving, terminating bool
	hostname                    string
	ports                       []port // sorted; nil for a headless service without ports
}

// endpointsOf returns the pods of pods that back svc, sorted by name;
// terminating pods only when includeTerminating.
func endpointsOf(svc *corev1.Service, pods []*corev1.Pod, includeTerminating bool) []endpoint {
	var out []endpoint
	publish := svc.Spec.PublishNotReadyAddresses
	for _, pod := range pods {
		ip := podIPv4(pod)
		terminating := pod.DeletionTimestamp != nil
		if ip == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
			terminating && !includeTerminating && !publish {
			continue
		}
		ports := resolvePorts(svc, pod)
		if len(svc.Spec.Ports) > 0 && len(ports) == 0 {
			continue // it serves none of the service's ports
		}
		ready := podReady(pod)
		e := endpoint{pod: pod, ip: ip, serving: ready || publish, ready: ready && !terminating || publish,
			terminating: terminating, ports: ports}
		if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
			e.hostname = pod.Spec.Hostname
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b endpoint) int { return strings.Compare(a.pod.Name, b.pod.Name) })
	return out
}

// podIPv4 is the pod's IPv4 address ("" without one): litek8s's slices
// are of addressType IPv4.
func podIPv4(pod *corev1.Pod) string {
	ips := []string{pod.Status.PodIP}
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	for _, s := range ips {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			return a.String()
		}
	}
	return ""
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// resolvePorts resolves the service's ports on pod, sorted; a port whose
// named targetPort the pod does not have is left out.
func resolvePorts(svc *corev1.Service, pod *corev1.Pod) []port {
	var out []port
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if n, ok := findPort(pod, sp); ok {
			out = append(out, port{name: sp.Name, port: n, protocol: protocolOf(sp.Protocol), appProtocol: sp.AppProtocol})
		}
	}
	slices.SortFunc(out, comparePorts)
	return out
}

func comparePorts(a, b port) int {
	return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.port, b.port), strings.Compare(string(a.protocol), string(b.protocol)))
}

// findPort is the port of the pod that sp's targetPort names: a number as
// is, a name among the ports of the pod's containers (and sidecars) of the
// same protocol.
func findPort(pod *corev1.Pod, sp *corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type == intstr.Int {
		if tp.IntVal == 0 {
			return sp.Port, true
		}
		return tp.IntVal, true
	}
	containers := slices.Clone(pod.Spec.Containers)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	for _, c := range containers {
		for _, p := range c.Ports {
			if p.Name == tp.StrVal && protocolOf(p.Protocol) == protocolOf(sp.Protocol) {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

func protocolOf(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// portsKey identifies a set of ports (sorted).
func portsKey(ps []port) string {
	var b strings.Builder
	for _, p := range ps {
		ap := ""
		if p.appProtocol != nil {
			ap = *p.appProtocol
		}
		fmt.Fprintf(&b, "%s/%d/%s/%s;", p.name, p.port, p.protocol, ap)
	}
	return b.String()
}
