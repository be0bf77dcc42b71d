package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/litek8s/litek8s/internal/api/discovery"
	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/kubeletclient"
	"github.com/litek8s/litek8s/internal/kv"
)

// The connect subresources: pods/log, exec, attach, portforward and the
// nodes, pods and services proxies. They are reads of the local store on
// any member (a follower streams to the kubelet itself), then a relay to
// the node's kubelet or the pod through Config.Kubelets
// (kubeletclient.Proxy: streaming, protocol upgrades).

// Kubelets reaches the nodes' kubelets and the pods (kubeletclient.Client).
type Kubelets interface {
	// NodeURL is the base URL of node's kubelet.
	NodeURL(node *corev1.Node) (*url.URL, error)
	// KubeletTransport reaches kubelets (insecure: without verifying
	// their serving certificates).
	KubeletTransport(insecure bool) http.RoundTripper
	// BackendTransport reaches pods and service endpoints.
	BackendTransport() http.RoundTripper
}

// connectSubresources are the connect subresources of each resource.
var connectSubresources = map[string][]string{
	"pods":     {"attach", "exec", "log", "portforward", "proxy"},
	"nodes":    {"proxy"},
	"services": {"proxy"},
}

// connectDiscovery announces the connect subresources of r (kube's
// *Options kinds, the parent's group and version).
func connectDiscovery(r *registry.Resource) []discovery.Subresource {
	var out []discovery.Subresource
	for _, sub := range connectSubresources[r.Resource] {
		d := discovery.Subresource{Name: sub, Verbs: []string{"create", "get"}}
		switch sub {
		case "attach":
			d.Kind = "PodAttachOptions"
		case "exec":
			d.Kind = "PodExecOptions"
		case "portforward":
			d.Kind = "PodPortForwardOptions"
		case "log":
			d.Verbs = []string{"get"} // answers with the parent's kind, as kube announces
		case "proxy":
			d.Kind, d.Verbs = r.Kind+"ProxyOptions", []string{"create", "delete", "get", "patch", "update"}
		}
		out = append(out, d)
	}
	return out
}

// isConnect tells a connect subresource of res.
func isConnect(res *registry.Resource, sub string) bool {
	if res.Group != "" || res.Custom {
		return false
	}
	for _, s := range connectSubresources[res.Resource] {
		if s == sub {
			return true
		}
	}
	return false
}

// isLongRunning tells the requests that may last as long as their
// client (kube's long-running check: watches, and the exec, attach,
// portforward, log and proxy subresources): no deadline, not counted
// against the in-flight limits.
func isLongRunning(r *http.Request) bool {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/api/v1/") {
		return false
	}
	segs := strings.Split(strings.TrimPrefix(p, "/api/v1/"), "/")
	if len(segs) > 2 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	if len(segs) < 3 {
		return false
	}
	switch segs[2] {
	case "exec", "attach", "portforward", "log":
		return segs[0] == "pods" && len(segs) == 3
	case "proxy":
		return segs[0] == "pods" || segs[0] == "nodes" || segs[0] == "services"
	}
	return false
}

// connect serves a connect subresource.
func (s *Server) connect(w http.ResponseWriter, r *http.Request, q *request) error {
	if s.cfg.Kubelets == nil {
		return apierrors.NewServiceUnavailable("this member does not reach kubelets")
	}
	switch q.subresource {
	case "log":
		if r.Method != http.MethodGet {
			return errMethodNotAllowed
		}
		return s.podLog(w, r, q)
	case "exec", "attach", "portforward":
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			return errMethodNotAllowed
		}
		if err := s.authorizeVerb(r, q, "create"); err != nil {
			return err
		}
		return s.podStream(w, r, q)
	}
	switch q.res.Resource { // proxy
	case "nodes":
		return s.nodeProxy(w, r, q)
	case "pods":
		return s.podProxy(w, r, q)
	}
	return s.serviceProxy(w, r, q)
}

// authorizeVerb checks verb on q as well (kube's
// AuthorizePodWebsocketUpgradeCreatePermission: a WebSocket exec is a
// GET, and needs create like the SPDY POST).
func (s *Server) authorizeVerb(r *http.Request, q *request, verb string) error {
	u := auth.UserFrom(r.Context())
	if authzVerb(r, q) == verb || (u != nil && u.InGroup(auth.GroupMasters)) {
		return nil
	}
	return s.check(r.Context(), auth.Attributes{User: u, Verb: verb, ResourceRequest: true,
		APIGroup: q.res.Group, Resource: q.res.Resource, Subresource: q.subresource, Namespace: q.namespace, Name: q.name})
}

// getTyped reads and decodes one object, consistently (as kube's gets
// from etcd): a pod created on the leader just before is found on a
// follower too.
func getTyped[T any](ctx context.Context, s *Server, res *registry.Resource, namespace, name string) (*T, error) {
	obj, _, err := s.store.Get(ctx, kv.Key{Resource: res.StoreKey(), Namespace: namespace, Name: name}, true)
	if err != nil {
		return nil, storeErr(err, res, name)
	}
	v := new(T)
	if err := json.Unmarshal(obj.Raw, v); err != nil {
		return nil, fmt.Errorf("api: decode stored %s: %w", obj.Key, err)
	}
	return v, nil
}

func (s *Server) coreRow(plural string) *registry.Resource { return s.registry().Lookup("v1", plural) }

// kubeletOf is the base URL of the kubelet of the pod's node.
func (s *Server) kubeletOf(ctx context.Context, pod *corev1.Pod) (*url.URL, error) {
	if pod.Spec.NodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	return s.nodeURL(ctx, pod.Spec.NodeName)
}

func (s *Server) nodeURL(ctx context.Context, name string) (*url.URL, error) {
	node, err := getTyped[corev1.Node](ctx, s, s.coreRow("nodes"), "", name)
	if err != nil {
		return nil, err
	}
	u, err := s.cfg.Kubelets.NodeURL(node)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return u, nil
}

// proxyError answers a backend that could not be reached (kube's
// UpgradeAwareHandler: 503 with the dial error).
func (s *Server) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return // the client went away
	}
	s.writeError(w, r, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
}

// podContainer is the container a request names, or the pod's only
// container (kube's validateContainer).
func podContainer(pod *corev1.Pod, container string) (string, error) {
	var names []string
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			names = append(names, c.Name)
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if container == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s",
			pod.Name, names))
	}
	for _, n := range names {
		if n == container {
			return container, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, pod.Name))
}

// podStream serves exec, attach and portforward: the upgrade request is
// relayed to the kubelet's /exec, /attach or /portForward.
func (s *Server) podStream(w http.ResponseWriter, r *http.Request, q *request) error {
	qv := r.URL.Query()
	pod, err := getTyped[corev1.Pod](r.Context(), s, q.res, q.namespace, q.name)
	if err != nil {
		return err
	}
	var rel *url.URL
	if q.subresource == "portforward" {
		o, err := parsePortForwardOptions(qv)
		if err != nil {
			return err
		}
		rel = kubeletclient.PortForwardPath(pod.Namespace, pod.Name, o)
	} else {
		container, err := podContainer(pod, qv.Get("container"))
		if err != nil {
			return err
		}
		o := &corev1.PodExecOptions{Stdin: queryBool(qv, "stdin"), Stdout: queryBool(qv, "stdout"),
			Stderr: queryBool(qv, "stderr"), TTY: queryBool(qv, "tty"), Command: qv["command"]}
		if q.subresource == "exec" {
			rel = kubeletclient.ExecPath(pod.Namespace, pod.Name, container, o)
		} else {
			rel = kubeletclient.AttachPath(pod.Namespace, pod.Name, container,
				&corev1.PodAttachOptions{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, TTY: o.TTY})
		}
	}
	base, err := s.kubeletOf(r.Context(), pod)
	if err != nil {
		return err
	}
	kubeletclient.Proxy(w, r, kubeletclient.At(base, rel), s.cfg.Kubelets.KubeletTransport(false), s.proxyError)
	return nil
}

// parsePortForwardOptions reads ?ports= (kube's PodPortForwardOptions).
func parsePortForwardOptions(qv url.Values) (*corev1.PodPortForwardOptions, error) {
	o := &corev1.PodPortForwardOptions{}
	for _, v := range qv["ports"] {
		for _, p := range strings.Split(v, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse port %q: %v", p, err))
			}
			o.Ports = append(o.Ports, int32(n))
		}
	}
	return o, nil
}

// nodeProxy serves nodes/{[scheme:]name[:port]}/proxy/{path}: to the
// node's kubelet, or to another port of the node (kube's node
// ResourceLocation: http unless the scheme says https, without the
// kubelet client certificate).
func (s *Server) nodeProxy(w http.ResponseWriter, r *http.Request, q *request) error {
	scheme, name, port, ok := splitSchemeNamePort(q.name)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", q.name))
	}
	base, err := s.nodeURL(r.Context(), name)
	if err != nil {
		return err
	}
	host, kubeletPort, _ := net.SplitHostPort(base.Host)
	if port == "" || port == kubeletPort {
		s.proxyTo(w, r, base, q.proxyPath, s.cfg.Kubelets.KubeletTransport(false))
		return nil
	}
	s.proxyTo(w, r, &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}, q.proxyPath, s.cfg.Kubelets.BackendTransport())
	return nil
}

// podProxy serves pods/{[scheme:]name[:port]}/proxy/{path}: to the pod IP
// (kube's pod ResourceLocation).
func (s *Server) podProxy(w http.ResponseWriter, r *http.Request, q *request) error {
	scheme, name, port, ok := splitSchemeNamePort(q.name)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", q.name))
	}
	pod, err := getTyped[corev1.Pod](r.Context(), s, q.res, q.namespace, name)
	if err != nil {
		return err
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	var ip string
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	if a := net.ParseIP(ip); a == nil || !a.IsGlobalUnicast() {
		return apierrors.NewBadRequest("address not allowed")
	}
	host := ip
	if port != "" {
		host = net.JoinHostPort(ip, port)
	} else if strings.Contains(ip, ":") {
		host = "[" + ip + "]"
	}
	s.proxyTo(w, r, &url.URL{Scheme: scheme, Host: host}, q.proxyPath, s.cfg.Kubelets.BackendTransport())
	return nil
}

// proxyTo relays r to path on base, with r's query.
func (s *Server) proxyTo(w http.ResponseWriter, r *http.Request, base *url.URL, path string, rt http.RoundTripper) {
	u := *base
	u.Path, u.RawQuery = path, r.URL.RawQuery
	if u.Path == "" {
		u.Path = "/"
	}
	kubeletclient.Proxy(w, r, &u, rt, s.proxyError)
}

// splitSchemeNamePort splits "[scheme:]name[:port]" (kube's
// utilnet.SplitSchemeNamePort): scheme is http or https, http by default.
func splitSchemeNamePort(id string) (scheme, name, port string, ok bool) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		name, port = parts[0], parts[1]
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
	default:
		return "", "", "", false
	}
	if scheme == "" {
		scheme = "http"
	}
	if name == "" || (scheme != "http" && scheme != "https") {
		return "", "", "", false
	}
	return scheme, name, port, true
}
