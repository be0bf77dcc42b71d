package chart

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// nonDefault are the non-default values of acceptance 3: 5 members,
// preferred anti-affinity, ServiceMonitor, PrometheusRule and dashboard
// on, a given admin token (and much else).
const nonDefault = "testdata/values-nondefault.yaml"

// Issue 7, acceptance 3 (first half): `helm lint --strict` and `helm
// template` pass with default and non-default values, and every rendered
// object of a built-in kind decodes strictly into its k8s.io/api type.
func TestLintAndTemplate(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string // kind/name rendered
	}{
		{"defaults", nil, []string{
			"ConfigMap/lk-litek8s-config", "ConfigMap/lk-litek8s-test-health", "Pod/lk-litek8s-test-health",
			"PodDisruptionBudget/lk-litek8s", "Role/lk-litek8s", "RoleBinding/lk-litek8s",
			"Secret/lk-litek8s-tokens", "Service/lk-litek8s", "Service/lk-litek8s-leader", "Service/lk-litek8s-peers",
			"ServiceAccount/lk-litek8s", "StatefulSet/lk-litek8s"}},
		{"non-default", []string{"-f", nonDefault}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := h.must(append([]string{"lint", "--strict", chart}, tc.args...)...)
			if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
				t.Fatalf("helm lint --strict:\n%s", out)
			}
			ms := h.template(chart, tc.args...)
			if tc.want != nil && !slices.Equal(ms.ids(), tc.want) {
				t.Errorf("rendered %v\nwant     %v", ms.ids(), tc.want)
			}
			for _, o := range ms {
				if ns := o.u.GetNamespace(); ns != namespace {
					t.Errorf("%s in namespace %q, want %q", o.id(), ns, namespace)
				}
			}
		})
	}
}

// The non-default values reach the objects they are about.
func TestNonDefaultValues(t *testing.T) {
	h := newHelm(t)
	ms := h.template(chartDir(t), "-f", nonDefault)
	sts := ms.statefulSet(t)
	if *sts.Spec.Replicas != 5 {
		t.Errorf("replicas %d, want 5", *sts.Spec.Replicas)
	}
	cfg := nodeConfig(t, ms.configMap(t, "litek8s-config"))
	if cfg["bootstrap-expect"] != float64(5) || len(cfg["peers"].([]any)) != 5 {
		t.Errorf("bootstrap-expect %v, peers %v: want 5 of each", cfg["bootstrap-expect"], cfg["peers"])
	}
	if want := "https://litek8s-4.litek8s-peers.litek8s.svc.cluster.example:6443"; cfg["peers"].([]any)[4] != want {
		t.Errorf("peer 4 is %v, want %s", cfg["peers"].([]any)[4], want)
	}
	for k, want := range map[string]any{"snapshot-threshold": float64(16384), "commit-timeout": "1ms",
		"log-level": "debug", "simulated-nodes": float64(10)} {
		if cfg[k] != want {
			t.Errorf("config %s = %v, want %v", k, cfg[k], want)
		}
	}
	if !slices.Contains(toStrings(cfg["hostname"]), "litek8s.example.com") {
		t.Errorf("hostname %v lacks the extra hostname", cfg["hostname"])
	}
	if got := string(ms.secret(t, "litek8s-tokens").Data["admin-token"]); got != "given-admin-token-0123456789" {
		t.Errorf("admin token %q, want the given one", got)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	if c.Image != "registry.example/litek8s/litek8s:0.1.0-rc1" {
		t.Errorf("image %s", c.Image)
	}
	if !slices.Contains(c.Args, "--feed-size=20000") {
		t.Errorf("args %v lack the extra arg", c.Args)
	}
	anti := sts.Spec.Template.Spec.Affinity.PodAntiAffinity
	if anti == nil || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 0 ||
		len(anti.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		anti.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "topology.kubernetes.io/zone" {
		t.Errorf("podAntiAffinity %+v, want one preferred term on the zone", anti)
	}
	if sts.Spec.Template.Spec.Affinity.NodeAffinity == nil {
		t.Error("affinity.nodeAffinity from values is lost")
	}
	pdb := ms.get(t, "PodDisruptionBudget", "litek8s").typed.(*policyv1.PodDisruptionBudget)
	if pdb.Spec.MaxUnavailable.IntValue() != 2 {
		t.Errorf("PDB maxUnavailable %v, want 2 of 5", pdb.Spec.MaxUnavailable)
	}
	sm := ms.get(t, "ServiceMonitor", "litek8s").u
	if l := sm.GetLabels()["release"]; l != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor label release=%q", l)
	}
	for _, kind := range []string{"PrometheusRule", "ServiceMonitor"} {
		if !ms.has(kind, "litek8s") {
			t.Errorf("no %s", kind)
		}
	}
	if dash := ms.configMap(t, "litek8s-dashboards"); dash.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels %v", dash.Labels)
	}
	if svc := ms.service(t, "litek8s"); svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Errorf("client Service type %s", svc.Spec.Type)
	}
}

// The defaults are what the issue asks for: a StatefulSet of 3 members
// started in parallel, --bootstrap-expect = replicas with the per-ordinal
// peer list, a headless Service publishing not-ready members, required
// anti-affinity on the hostname, HTTPS probes on the member's own
// endpoints, a non-root read-only container, the tokens from the Secret and
// the image tag = appVersion.
func TestDefaults(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	ms := h.template(chart)
	sts := ms.statefulSet(t)
	spec := sts.Spec
	if *spec.Replicas != 3 || spec.PodManagementPolicy != appsv1.ParallelPodManagement ||
		spec.ServiceName != "lk-litek8s-peers" {
		t.Errorf("replicas %d, podManagementPolicy %s, serviceName %s", *spec.Replicas, spec.PodManagementPolicy, spec.ServiceName)
	}
	peers := ms.service(t, "lk-litek8s-peers")
	if peers.Spec.ClusterIP != corev1.ClusterIPNone || !peers.Spec.PublishNotReadyAddresses {
		t.Errorf("peers Service: clusterIP %q, publishNotReadyAddresses %v", peers.Spec.ClusterIP, peers.Spec.PublishNotReadyAddresses)
	}
	cfg := nodeConfig(t, ms.configMap(t, "lk-litek8s-config"))
	var wantPeers []string
	for i := range 3 {
		wantPeers = append(wantPeers, fmt.Sprintf("https://lk-litek8s-%d.lk-litek8s-peers.litek8s.svc.cluster.local:6443", i))
	}
	if cfg["bootstrap-expect"] != float64(3) || !slices.Equal(toStrings(cfg["peers"]), wantPeers) {
		t.Errorf("bootstrap-expect %v, peers %v; want 3, %v", cfg["bootstrap-expect"], cfg["peers"], wantPeers)
	}
	if cfg["leader-label"] != "litek8s.io/leader" {
		t.Errorf("leader-label %v", cfg["leader-label"])
	}
	if cfg["kubernetes-peers"] != true || cfg["remove-scaled-down-members"] != true ||
		cfg["ca-cert-file"] != "/etc/litek8s-secret/ca.crt" || cfg["ca-key-file"] != "/etc/litek8s-secret/ca.key" {
		t.Errorf("kubernetes-peers %v, remove-scaled-down-members %v, ca-cert-file %v, ca-key-file %v", cfg["kubernetes-peers"],
			cfg["remove-scaled-down-members"], cfg["ca-cert-file"], cfg["ca-key-file"])
	}
	pod := spec.Template.Spec
	anti := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 1 || anti[0].TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("required anti-affinity %+v", anti)
	}
	if !*pod.AutomountServiceAccountToken {
		t.Error("the leader label needs the service account token")
	}
	c := pod.Containers[0]
	chartYAML, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ AppVersion string }
	if err := yaml.Unmarshal(chartYAML, &meta); err != nil {
		t.Fatal(err)
	}
	if want := "ghcr.io/litek8s/litek8s:" + meta.AppVersion; c.Image != want {
		t.Errorf("image %s, want %s", c.Image, want)
	}
	for probe, want := range map[*corev1.Probe]string{c.ReadinessProbe: "/readyz", c.LivenessProbe: "/livez", c.StartupProbe: "/livez"} {
		if g := probe.HTTPGet; g == nil || g.Path != want || g.Scheme != corev1.URISchemeHTTPS || g.Port.String() != "api" {
			t.Errorf("probe %+v, want GET %s over HTTPS on api", probe.HTTPGet, want)
		}
	}
	if sc := c.SecurityContext; sc == nil || !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext %+v", sc)
	}
	if sc := pod.SecurityContext; sc == nil || !*sc.RunAsNonRoot || sc.FSGroup == nil {
		t.Errorf("pod securityContext %+v", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	for _, name := range []string{"LITEK8S_JOIN_TOKEN", "LITEK8S_ADMIN_TOKEN"} {
		e := envVar(c.Env, name)
		if e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "lk-litek8s-tokens" {
			t.Errorf("%s: %+v, want a secretKeyRef to lk-litek8s-tokens", name, e)
		}
	}
	if len(spec.VolumeClaimTemplates) != 1 || spec.VolumeClaimTemplates[0].Name != "data" {
		t.Errorf("volumeClaimTemplates %+v", spec.VolumeClaimTemplates)
	}
	sel := ms.service(t, "lk-litek8s-leader").Spec.Selector
	if sel["litek8s.io/leader"] != "true" || sel["app.kubernetes.io/instance"] != release {
		t.Errorf("leader Service selector %v", sel)
	}
	// The generated tokens: long, random, distinct.
	sec := ms.secret(t, "lk-litek8s-tokens")
	admin, join := string(sec.Data["admin-token"]), string(sec.Data["join-token"])
	if len(admin) < 32 || len(join) < 32 || admin == join {
		t.Errorf("generated tokens %q and %q", admin, join)
	}
	// The generated CA: a CA certificate whose key is ca.key.
	pair, err := tls.X509KeyPair(sec.Data["ca.crt"], sec.Data["ca.key"])
	if err != nil {
		t.Fatalf("generated CA: %v", err)
	}
	if ca, err := x509.ParseCertificate(pair.Certificate[0]); err != nil || !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("generated CA %+v: %v", ca, err)
	}
	// The helm test trusts it and nothing else.
	testCfg := ms.configMap(t, "lk-litek8s-test-health").Data["kubeconfig"]
	if strings.Contains(testCfg, "insecure") || !strings.Contains(testCfg, "certificate-authority: /etc/litek8s-test-ca/ca.crt") {
		t.Errorf("the helm test's kubeconfig:\n%s", testCfg)
	}
	if again := string(h.template(chart).secret(t, "lk-litek8s-tokens").Data["admin-token"]); again == admin {
		t.Error("two renders without a cluster generated the same admin token")
	}
}

// maxUnavailable is floor((n-1)/2): a majority stays up. With 1 or 2
// members that is 0, and no PDB is rendered (it would block every drain)
// unless maxUnavailable is set.
func TestPodDisruptionBudget(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	for _, tc := range []struct {
		args []string
		want int // -1: no PDB
	}{
		{[]string{"--set", "replicas=1"}, -1},
		{[]string{"--skip-schema-validation", "--set", "replicas=2"}, -1}, // the schema refuses it; the template copes
		{[]string{"--set", "replicas=3"}, 1},
		{[]string{"--skip-schema-validation", "--set", "replicas=4"}, 1},
		{[]string{"--set", "replicas=5"}, 2},
		{[]string{"--set", "replicas=7"}, 3},
		{[]string{"--set", "replicas=1", "--set", "pdb.maxUnavailable=0"}, 0},
		{[]string{"--set", "replicas=5", "--set", "pdb.maxUnavailable=1"}, 1},
		{[]string{"--set", "pdb.enabled=false"}, -1},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			pdbs := h.template(chart, tc.args...).ofKind("PodDisruptionBudget")
			switch {
			case tc.want < 0 && len(pdbs) != 0:
				t.Errorf("a PDB was rendered:\n%s", pdbs[0].yaml)
			case tc.want >= 0 && len(pdbs) != 1:
				t.Errorf("%d PDBs, want 1", len(pdbs))
			case tc.want >= 0:
				if got := pdbs[0].typed.(*policyv1.PodDisruptionBudget).Spec.MaxUnavailable.IntValue(); got != tc.want {
					t.Errorf("maxUnavailable %d, want %d", got, tc.want)
				}
			}
		})
	}
}

func TestAntiAffinity(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	for _, tc := range []struct{ typ, want string }{{"required", "required"}, {"preferred", "preferred"}, {"none", ""}} {
		t.Run(tc.typ, func(t *testing.T) {
			pod := h.template(chart, "--set", "antiAffinity.type="+tc.typ).statefulSet(t).Spec.Template.Spec
			got := ""
			if a := pod.Affinity; a != nil && a.PodAntiAffinity != nil {
				if len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 1 {
					got += "required"
				}
				if len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 1 {
					got += "preferred"
				}
			}
			if got != tc.want {
				t.Errorf("anti-affinity %q, want %q (%+v)", got, tc.want, pod.Affinity)
			}
		})
	}
}

// Scaling changes the peer list but not the checksum of the shared
// settings: no member restarts for it. A setting does change it.
func TestConfigChecksum(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	sum := func(args ...string) string {
		return h.template(chart, args...).statefulSet(t).Spec.Template.Annotations["checksum/config"]
	}
	base := sum()
	if base == "" {
		t.Fatal("no checksum/config annotation")
	}
	if got := sum("--set", "replicas=5"); got != base {
		t.Error("scaling changes checksum/config (every member would restart)")
	}
	if got := sum("--set", "logLevel=debug"); got == base {
		t.Error("a setting does not change checksum/config")
	}
}

// Other values: existingSecret, persistence off, the leader Service off,
// metrics off.
func TestOptionalParts(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)

	ms := h.template(chart, "--set", "auth.existingSecret=mine")
	if len(ms.ofKind("Secret")) != 0 {
		t.Error("a Secret was rendered with auth.existingSecret")
	}
	if ref := envVar(ms.statefulSet(t).Spec.Template.Spec.Containers[0].Env, "LITEK8S_ADMIN_TOKEN").ValueFrom.SecretKeyRef; ref.Name != "mine" {
		t.Errorf("admin token from Secret %s, want mine", ref.Name)
	}

	// Issue 17: a kubernetes.io/tls Secret of the operator's becomes the
	// API serving certificate (mounted, passed as --tls-cert-file and
	// --tls-private-key-file); without it, no such flags or volume.
	ms = h.template(chart, "--set", "tls.existingSecret=api-tls", "--set", "tls.reloadInterval=30s")
	cfg := nodeConfig(t, ms.configMap(t, "lk-litek8s-config"))
	if cfg["tls-cert-file"] != "/etc/litek8s-tls/tls.crt" || cfg["tls-private-key-file"] != "/etc/litek8s-tls/tls.key" ||
		cfg["tls-reload-interval"] != "30s" {
		t.Errorf("tls.existingSecret: node config %v", cfg)
	}
	tlsSTS := ms.statefulSet(t)
	if v := volume(tlsSTS.Spec.Template.Spec.Volumes, "tls"); v.Secret == nil || v.Secret.SecretName != "api-tls" {
		t.Errorf("tls.existingSecret: volume %+v, want Secret api-tls", v)
	}
	if !slices.ContainsFunc(tlsSTS.Spec.Template.Spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "tls" && m.MountPath == "/etc/litek8s-tls" && m.SubPath == "" && m.ReadOnly
	}) {
		t.Errorf("tls.existingSecret: mounts %+v, want tls at /etc/litek8s-tls", tlsSTS.Spec.Template.Spec.Containers[0].VolumeMounts)
	}
	def := h.template(chart)
	if _, ok := nodeConfig(t, def.configMap(t, "lk-litek8s-config"))["tls-cert-file"]; ok ||
		volume(def.statefulSet(t).Spec.Template.Spec.Volumes, "tls").Name != "" {
		t.Error("tls-cert-file or the tls volume without tls.existingSecret")
	}

	sts := h.template(chart, "--set", "persistence.enabled=false").statefulSet(t)
	if len(sts.Spec.VolumeClaimTemplates) != 0 || volume(sts.Spec.Template.Spec.Volumes, "data").EmptyDir == nil {
		t.Error("persistence.enabled=false: want an emptyDir data volume and no PVC")
	}

	ms = h.template(chart, "--set", "leaderService.enabled=false", "--set", "kubernetesAPI.peerPodIPs=false",
		"--set", "kubernetesAPI.removeScaledDownMembers=false")
	if ms.has("Service", "lk-litek8s-leader") || len(ms.ofKind("Role")) != 0 {
		t.Errorf("leaderService.enabled=false and no kubernetesAPI renders %v", ms.ids())
	}
	if _, ok := nodeConfig(t, ms.configMap(t, "lk-litek8s-config"))["leader-label"]; ok {
		t.Error("leader-label set without the leader Service")
	}
	if *ms.statefulSet(t).Spec.Template.Spec.AutomountServiceAccountToken {
		t.Error("the service account token is mounted though no member calls the Kubernetes API")
	}

	ms = h.template(chart, "--set", "metrics.enabled=false", "--set", "metrics.serviceMonitor.enabled=true")
	if ms.has("ServiceMonitor", "lk-litek8s") {
		t.Error("a ServiceMonitor without the metrics listener")
	}
	if _, ok := nodeConfig(t, ms.configMap(t, "lk-litek8s-config"))["metrics-addr"]; ok {
		t.Error("metrics-addr set with metrics.enabled=false")
	}

	if n := len(h.template(chart, "--set", "tests.enabled=false").ofKind("Pod")); n != 0 {
		t.Errorf("tests.enabled=false renders %d test Pods", n)
	}
}

// values.schema.json refuses unknown keys, bad enums and the settings the
// chart owns; the template refuses the latter too (for --skip-schema-validation).
func TestSchemaRefuses(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	for _, tc := range []struct {
		args []string
		want string // in helm's error
	}{
		{[]string{"--set", "replica=3"}, "replica"},
		{[]string{"--set", "image.tags=1"}, "tags"},
		{[]string{"--set", "antiAffinity.type=sometimes"}, "sometimes"},
		{[]string{"--set", "replicas=0"}, "replicas"},
		{[]string{"--set", "metrics.serviceMonitor.interval=often"}, "interval"},
		{[]string{"--set", "config.peers=x"}, "peers"},
		{[]string{"--set", "config.data-dir=/x"}, "data-dir"},
		{[]string{"--skip-schema-validation", "--set", "config.bootstrap-expect=1"}, "the chart sets \"bootstrap-expect\" itself"},
		{[]string{"--set", "tls.reloadInterval=soon"}, "reloadInterval"},
		{[]string{"--set", "config.tls-cert-file=/x"}, "tls-cert-file"},
		{[]string{"--skip-schema-validation", "--set", "config.tls-cert-file=/x"}, "the chart sets \"tls-cert-file\" itself"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := h.run(append([]string{"template", release, chart, "--namespace", namespace}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
	// A free-form node setting passes.
	cfg := nodeConfig(t, h.template(chart, "--set", "config.trailing-logs=20000").configMap(t, "lk-litek8s-config"))
	if cfg["trailing-logs"] != float64(20000) {
		t.Errorf("config.trailing-logs: %v", cfg["trailing-logs"])
	}
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, fmt.Sprint(s))
	}
	return out
}

func envVar(env []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			return &env[i]
		}
	}
	return nil
}

func volume(vs []corev1.Volume, name string) *corev1.Volume {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return &corev1.Volume{}
}
