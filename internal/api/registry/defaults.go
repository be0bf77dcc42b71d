package registry

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Server-side defaults and mutations on create, following what
// kube-apiserver 1.37 stores for the same request (see the golden
// objects/*-post.json). One small function per kind, referenced from the
// registry.

// Normalize functions are kube's scheme defaults (SetDefaults_*): they run
// on every write, before managedFields are computed, so the fields they set
// belong to the writer as in kube. Prepare functions are create-time
// strategy and admission mutations (allocations, status), which kube does
// not attribute to the writer.

// defaultNamespace: kube labels every namespace with its name.
func defaultNamespace(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["kubernetes.io/metadata.name"] = ns.Name
}

func prepareNamespace(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	defaultNamespace(ns)
	if len(ns.Spec.Finalizers) == 0 {
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	}
	ns.Status.Phase = corev1.NamespaceActive
}

// prepareNode adds the not-ready NoSchedule taint that kube's
// TaintNodesByCondition admission gives every new node (the node lifecycle
// controller removes it once the node is Ready).
func prepareNode(obj runtime.Object) {
	n := obj.(*corev1.Node)
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	for _, t := range n.Spec.Taints {
		if t.MatchTaint(&notReady) {
			return
		}
	}
	n.Spec.Taints = append(n.Spec.Taints, notReady)
}

func prepareSecret(obj runtime.Object) {
	sec := obj.(*corev1.Secret)
	if len(sec.StringData) > 0 {
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		for k, v := range sec.StringData {
			sec.Data[k] = []byte(v)
		}
		sec.StringData = nil
	}
	if sec.Type == "" {
		sec.Type = corev1.SecretTypeOpaque
	}
}

// defaultService is SetDefaults_Service.
func defaultService(obj runtime.Object) {
	sp := &obj.(*corev1.Service).Spec
	if sp.Type == "" {
		sp.Type = corev1.ServiceTypeClusterIP
	}
	if sp.SessionAffinity == "" {
		sp.SessionAffinity = corev1.ServiceAffinityNone
	}
	if sp.SessionAffinity == corev1.ServiceAffinityNone {
		sp.SessionAffinityConfig = nil
	}
	if sp.SessionAffinity == corev1.ServiceAffinityClientIP && (sp.SessionAffinityConfig == nil ||
		sp.SessionAffinityConfig.ClientIP == nil || sp.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil) {
		t := corev1.DefaultClientIPServiceAffinitySeconds
		sp.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &t}}
	}
	if sp.Type != corev1.ServiceTypeExternalName && sp.InternalTrafficPolicy == nil {
		p := corev1.ServiceInternalTrafficPolicyCluster
		sp.InternalTrafficPolicy = &p
	}
	if ExternallyAccessible(obj.(*corev1.Service)) && sp.ExternalTrafficPolicy == "" {
		sp.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if sp.Type == corev1.ServiceTypeLoadBalancer && sp.AllocateLoadBalancerNodePorts == nil {
		t := true
		sp.AllocateLoadBalancerNodePorts = &t
	}
	if sp.Type == corev1.ServiceTypeLoadBalancer {
		ing := obj.(*corev1.Service).Status.LoadBalancer.Ingress
		for i := range ing {
			if ing[i].IP != "" && ing[i].IPMode == nil {
				vip := corev1.LoadBalancerIPModeVIP
				ing[i].IPMode = &vip
			}
		}
	}
	for i := range sp.Ports {
		p := &sp.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}

// prepareService allocates the cluster IP (kube's service REST).
func prepareService(obj runtime.Object) {
	svc := obj.(*corev1.Service)
	defaultService(svc)
	if NeedsClusterIP(svc) {
		AllocClusterIP(&svc.Spec)
	}
}

// AllocClusterIP gives a service that needs one a cluster IP (the first
// of clusterIPs when only those are set) and its IP family fields.
func AllocClusterIP(sp *corev1.ServiceSpec) {
	if sp.ClusterIP == "" && len(sp.ClusterIPs) > 0 {
		sp.ClusterIP = sp.ClusterIPs[0]
	}
	if sp.ClusterIP == "" {
		sp.ClusterIP = RandomClusterIP()
	}
	if len(sp.ClusterIPs) == 0 {
		sp.ClusterIPs = []string{sp.ClusterIP}
	}
	if sp.ClusterIP != corev1.ClusterIPNone && len(sp.IPFamilies) == 0 {
		sp.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if sp.IPFamilyPolicy == nil {
		p := corev1.IPFamilyPolicySingleStack
		sp.IPFamilyPolicy = &p
	}
}

// RandomClusterIP picks an address in 10.96.0.0/12, kube's default range,
// other than the kubernetes Service's.
func RandomClusterIP() string {
	for {
		var b [3]byte
		rand.Read(b[:])
		if ip := fmt.Sprintf("10.%d.%d.%d", 96+b[0]%16, b[1], 1+b[2]%254); ip != kubernetesServiceIP {
			return ip
		}
	}
}

// kubernetesServiceIP is the first address of the service range: the
// default/kubernetes Service's (its controller's
// kubernetesservice.Config.ServiceIP), which no other Service gets.
const kubernetesServiceIP = "10.96.0.1"

// takesKubernetesServiceIP reports whether svc, other than
// default/kubernetes, asks for the kubernetes Service's address.
func takesKubernetesServiceIP(svc *corev1.Service) bool {
	if svc.Namespace == "default" && svc.Name == "kubernetes" {
		return false
	}
	return svc.Spec.ClusterIP == kubernetesServiceIP || slices.Contains(svc.Spec.ClusterIPs, kubernetesServiceIP)
}

// defaultPod is SetDefaults_Pod and SetDefaults_PodSpec.
func defaultPod(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	defaultPodOnly(&pod.Spec)
	defaultPodSpec(&pod.Spec)
	defaultPodStatusIPs(&pod.Status)
	if pod.Spec.EnableServiceLinks == nil {
		t := corev1.DefaultEnableServiceLinks
		pod.Spec.EnableServiceLinks = &t
	}
}

func preparePod(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	defaultPod(pod)
	if pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodPending
	}
	pod.Status.QOSClass = podQOS(&pod.Spec)
}

func prepareDeployment(obj runtime.Object) {
	d := obj.(*appsv1.Deployment)
	sp := &d.Spec
	sp.Replicas = defaultInt32(sp.Replicas, 1)
	if sp.Strategy.Type == "" {
		sp.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if sp.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if sp.Strategy.RollingUpdate == nil {
			sp.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		q := intstr.FromString("25%")
		if sp.Strategy.RollingUpdate.MaxUnavailable == nil {
			sp.Strategy.RollingUpdate.MaxUnavailable = &q
		}
		if sp.Strategy.RollingUpdate.MaxSurge == nil {
			sp.Strategy.RollingUpdate.MaxSurge = &q
		}
	}
	sp.RevisionHistoryLimit = defaultInt32(sp.RevisionHistoryLimit, 10)
	sp.ProgressDeadlineSeconds = defaultInt32(sp.ProgressDeadlineSeconds, 600)
	defaultPodSpec(&sp.Template.Spec)
}

func prepareReplicaSet(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	rs.Spec.Replicas = defaultInt32(rs.Spec.Replicas, 1)
	defaultPodSpec(&rs.Spec.Template.Spec)
}

// defaultPodSpec applies the pod spec defaults kube applies everywhere a
// pod template appears.
func defaultPodSpec(sp *corev1.PodSpec) {
	if sp.RestartPolicy == "" {
		sp.RestartPolicy = corev1.RestartPolicyAlways
	}
	if sp.DNSPolicy == "" {
		sp.DNSPolicy = corev1.DNSClusterFirst
	}
	if sp.SchedulerName == "" {
		sp.SchedulerName = corev1.DefaultSchedulerName
	}
	if sp.TerminationGracePeriodSeconds == nil {
		g := int64(corev1.DefaultTerminationGracePeriodSeconds)
		sp.TerminationGracePeriodSeconds = &g
	}
	if sp.SecurityContext == nil {
		sp.SecurityContext = &corev1.PodSecurityContext{}
	}
	for i := range sp.InitContainers {
		defaultContainer(&sp.InitContainers[i])
	}
	for i := range sp.Containers {
		defaultContainer(&sp.Containers[i])
	}
	defaultPodSpecParts(sp)
}

func defaultContainer(c *corev1.Container) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = imagePullPolicy(c.Image)
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
}

// imagePullPolicy is kube's default pull policy of an image: Always for
// :latest or no tag (without a digest), IfNotPresent otherwise.
func imagePullPolicy(img string) corev1.PullPolicy {
	if !strings.Contains(img[strings.LastIndex(img, "/")+1:], ":") || strings.HasSuffix(img, ":latest") {
		if !strings.Contains(img, "@") {
			return corev1.PullAlways
		}
	}
	return corev1.PullIfNotPresent
}

func defaultInt32(p *int32, v int32) *int32 {
	if p != nil {
		return p
	}
	return &v
}
