package chart

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// Issue 19: what vcluster/vault-helm users expect of the chart. The
// defaults render none of it (no NetworkPolicy, CronJob or backup PVC, no
// extra containers or volumes, a plain RollingUpdate, no limits or auth
// settings in the node config); each value renders what it is about.
func TestExtrasDefaults(t *testing.T) {
	h := newHelm(t)
	ms := h.template(chartDir(t))
	for _, kind := range []string{"NetworkPolicy", "CronJob", "PersistentVolumeClaim"} {
		if n := len(ms.ofKind(kind)); n != 0 {
			t.Errorf("defaults render %d %s", n, kind)
		}
	}
	sts := ms.statefulSet(t)
	spec := sts.Spec.Template.Spec
	if len(spec.InitContainers) != 0 || len(spec.Containers) != 1 {
		t.Errorf("defaults: %d init containers, %d containers; want 0 and 1", len(spec.InitContainers), len(spec.Containers))
	}
	// Partition 0 is the API's default: left out, as before.
	if u := sts.Spec.UpdateStrategy; u.Type != appsv1.RollingUpdateStatefulSetStrategyType || u.RollingUpdate != nil {
		t.Errorf("defaults: updateStrategy %+v, want RollingUpdate without rollingUpdate", u)
	}
	cfg := nodeConfig(t, ms.configMap(t, "lk-litek8s-config"))
	for _, k := range []string{"anonymous-auth", "max-requests-inflight", "max-mutating-requests-inflight",
		"max-watches-inflight", "request-timeout", "min-request-timeout", "max-object-size-bytes", "token-auth-file"} {
		if v, ok := cfg[k]; ok {
			t.Errorf("defaults set %s: %v (the node's default applies)", k, v)
		}
	}
	for _, a := range spec.Containers[0].Args {
		if strings.HasPrefix(a, "--token-auth-file") {
			t.Errorf("defaults pass %s", a)
		}
	}
}

// `helm upgrade --reuse-values` from a release of the chart before these
// values keeps that release's values, without the new keys: the chart
// still renders, as with the defaults.
func TestExtrasMissingAfterReuseValues(t *testing.T) {
	h := newHelm(t)
	ms := h.template(chartDir(t), "--skip-schema-validation", "--set", "updateStrategy=null", "--set", "tokenAuth=null",
		"--set", "limits=null", "--set", "networkPolicy=null", "--set", "backup=null")
	if u := ms.statefulSet(t).Spec.UpdateStrategy; u.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		t.Errorf("updateStrategy %+v, want RollingUpdate", u)
	}
	if n := len(ms.ofKind("CronJob")) + len(ms.ofKind("NetworkPolicy")); n != 0 {
		t.Errorf("%d CronJobs and NetworkPolicies without their values", n)
	}
}

func TestExtrasPodParts(t *testing.T) {
	h := newHelm(t)
	ms := h.template(chartDir(t), "--set", "replicas=7",
		"--set", "extraVolumes[0].name=shared", "--set", "extraVolumes[0].emptyDir.medium=Memory",
		"--set", "extraVolumeMounts[0].name=shared", "--set", "extraVolumeMounts[0].mountPath=/shared",
		"--set", "initContainers[0].name=prepare", "--set", "initContainers[0].image=busybox:1.37.0",
		"--set", "initContainers[0].command={/bin/echo}",
		"--set", "extraContainers[0].name=shipper", "--set", "extraContainers[0].image=fluent/fluent-bit:4.0",
		"--set", "updateStrategy.rollingUpdate.partition=5",
		"--set", "tokenAuth.existingSecret=static-tokens", "--set", "tokenAuth.secretKey=t.csv",
		"--set", "anonymousAuth=false",
		"--set", "limits.maxRequestsInflight=800", "--set", "limits.maxMutatingRequestsInflight=0",
		"--set", "limits.maxWatchesInflight=5000", "--set", "limits.requestTimeout=2m",
		"--set", "limits.minRequestTimeout=10m", "--set", "limits.maxObjectSizeBytes=2097152")
	sts := ms.statefulSet(t)
	if *sts.Spec.Replicas != 7 {
		t.Errorf("replicas %d, want 7", *sts.Spec.Replicas)
	}
	spec := sts.Spec.Template.Spec
	if v := volume(spec.Volumes, "shared"); v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory {
		t.Errorf("extraVolumes: volume shared %+v", v)
	}
	node := spec.Containers[0]
	if node.Name != "node" || !slices.ContainsFunc(node.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "shared" && m.MountPath == "/shared"
	}) {
		t.Errorf("extraVolumeMounts: mounts of %s: %+v", node.Name, node.VolumeMounts)
	}
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Name != "prepare" || spec.InitContainers[0].Image != "busybox:1.37.0" {
		t.Errorf("initContainers: %+v", spec.InitContainers)
	}
	if len(spec.Containers) != 2 || spec.Containers[1].Name != "shipper" {
		t.Errorf("extraContainers: containers %+v", spec.Containers)
	}
	if u := sts.Spec.UpdateStrategy; u.RollingUpdate == nil || *u.RollingUpdate.Partition != 5 {
		t.Errorf("updateStrategy.rollingUpdate.partition=5: %+v", u)
	}
	if !slices.Contains(node.Args, "--token-auth-file=/etc/litek8s-token-auth/t.csv") {
		t.Errorf("tokenAuth: args %v", node.Args)
	}
	if v := volume(spec.Volumes, "token-auth"); v.Secret == nil || v.Secret.SecretName != "static-tokens" {
		t.Errorf("tokenAuth: volume %+v", v)
	}
	if !slices.ContainsFunc(node.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "token-auth" && m.MountPath == "/etc/litek8s-token-auth" && m.ReadOnly
	}) {
		t.Errorf("tokenAuth: mounts %+v", node.VolumeMounts)
	}
	cfg := nodeConfig(t, ms.configMap(t, "lk-litek8s-config"))
	for k, want := range map[string]any{"anonymous-auth": false, "max-requests-inflight": float64(800),
		"max-mutating-requests-inflight": float64(0), "max-watches-inflight": float64(5000),
		"request-timeout": "2m", "min-request-timeout": "10m", "max-object-size-bytes": float64(2097152)} {
		if cfg[k] != want {
			t.Errorf("config %s = %#v, want %#v", k, cfg[k], want)
		}
	}
	if cfg["bootstrap-expect"] != float64(7) || len(cfg["peers"].([]any)) != 7 {
		t.Errorf("bootstrap-expect %v, peers %v: want 7", cfg["bootstrap-expect"], cfg["peers"])
	}

	// OnDelete: no rollingUpdate, whatever rollingUpdate says.
	u := h.template(chartDir(t), "--set", "updateStrategy.type=OnDelete").statefulSet(t).Spec.UpdateStrategy
	if u.Type != appsv1.OnDeleteStatefulSetStrategyType || u.RollingUpdate != nil {
		t.Errorf("updateStrategy.type=OnDelete: %+v", u)
	}
}

// networkPolicy.enabled: the API port from apiFrom (anyone by default),
// API and Raft only from the release's members (and its backup Pods), the
// metrics port from metricsFrom.
func TestNetworkPolicy(t *testing.T) {
	h := newHelm(t)
	ms := h.template(chartDir(t), "--set", "networkPolicy.enabled=true")
	np := ms.get(t, "NetworkPolicy", "lk-litek8s").typed.(*networkingv1.NetworkPolicy)
	members := map[string]string{"app.kubernetes.io/name": "litek8s", "app.kubernetes.io/instance": release}
	if !maps.Equal(np.Spec.PodSelector.MatchLabels, members) {
		t.Errorf("podSelector %v, want %v", np.Spec.PodSelector.MatchLabels, members)
	}
	rules := np.Spec.Ingress
	if len(rules) != 3 {
		t.Fatalf("%d ingress rules, want 3 (API, members, metrics): %+v", len(rules), rules)
	}
	if ports(rules[0]) != "6443" || len(rules[0].From) != 0 {
		t.Errorf("API rule %+v, want port 6443 from anyone", rules[0])
	}
	if ports(rules[1]) != "6443,7000" || len(rules[1].From) != 1 || !maps.Equal(rules[1].From[0].PodSelector.MatchLabels, members) {
		t.Errorf("members rule %+v, want 6443 and 7000 from the members", rules[1])
	}
	if ports(rules[2]) != "9090" || len(rules[2].From) != 0 {
		t.Errorf("metrics rule %+v, want 9090 from anyone", rules[2])
	}

	ms = h.template(chartDir(t), "--set", "networkPolicy.enabled=true", "--set", "backup.enabled=true",
		"--set", "networkPolicy.apiFrom[0].ipBlock.cidr=10.0.0.0/8",
		"--set", "networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring",
		"--set", "metrics.enabled=true")
	rules = ms.get(t, "NetworkPolicy", "lk-litek8s").typed.(*networkingv1.NetworkPolicy).Spec.Ingress
	if len(rules[0].From) != 1 || rules[0].From[0].IPBlock == nil || rules[0].From[0].IPBlock.CIDR != "10.0.0.0/8" {
		t.Errorf("apiFrom: API rule %+v", rules[0])
	}
	backupPods := ms.get(t, "CronJob", "lk-litek8s-backup").typed.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template.Labels
	if len(rules[1].From) != 2 || !maps.Equal(rules[1].From[1].PodSelector.MatchLabels, backupPods) {
		t.Errorf("members rule %+v: want the backup Pods (%v) too", rules[1], backupPods)
	}
	if len(rules[2].From) != 1 || rules[2].From[0].NamespaceSelector.MatchLabels["name"] != "monitoring" {
		t.Errorf("metricsFrom: metrics rule %+v", rules[2])
	}
	noMetrics := h.template(chartDir(t), "--set", "networkPolicy.enabled=true", "--set", "metrics.enabled=false")
	if n := len(noMetrics.get(t, "NetworkPolicy", "lk-litek8s").typed.(*networkingv1.NetworkPolicy).Spec.Ingress); n != 2 {
		t.Errorf("metrics.enabled=false: %d ingress rules, want 2", n)
	}
}

// backup.enabled: a CronJob whose init container runs ctl snapshot save
// against the client Service with the admin token and CA of the release's
// Secret into the backup PVC, and whose container keeps the newest
// backup.keep files; the PVC is the chart's (kept on uninstall) or
// existingClaim. processes_test.go runs both containers against members.
func TestBackupCronJob(t *testing.T) {
	h := newHelm(t)
	ms := h.template(chartDir(t), "--set", "backup.enabled=true", "--set", "backup.keep=3",
		"--set", "backup.schedule=*/30 * * * *", "--set", "backup.persistence.size=5Gi",
		"--set", "backup.persistence.storageClassName=slow", "--set", "backup.timeZone=Etc/UTC")
	cj := ms.get(t, "CronJob", "lk-litek8s-backup").typed.(*batchv1.CronJob)
	if cj.Spec.Schedule != "*/30 * * * *" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent ||
		cj.Spec.TimeZone == nil || *cj.Spec.TimeZone != "Etc/UTC" {
		t.Errorf("schedule %q, concurrency %q, timeZone %v", cj.Spec.Schedule, cj.Spec.ConcurrencyPolicy, cj.Spec.TimeZone)
	}
	pod := cj.Spec.JobTemplate.Spec.Template
	if _, ok := pod.Labels["app.kubernetes.io/name"]; ok {
		t.Errorf("backup Pod labels %v: the Services would select it", pod.Labels)
	}
	spec := pod.Spec
	if len(spec.InitContainers) != 1 || len(spec.Containers) != 1 {
		t.Fatalf("%d init containers, %d containers; want 1 and 1", len(spec.InitContainers), len(spec.Containers))
	}
	save := spec.InitContainers[0]
	if got := strings.Join(append(slices.Clone(save.Command), save.Args...), " "); got != "ctl snapshot save /backup/incoming.snap" {
		t.Errorf("save runs %q", got)
	}
	if e := envVar(save.Env, "LITEK8S_SERVER"); e == nil || e.Value != "https://lk-litek8s."+namespace+".svc.cluster.local:6443" {
		t.Errorf("LITEK8S_SERVER %+v, want the client Service", e)
	}
	if e := envVar(save.Env, "LITEK8S_TOKEN"); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Name != "lk-litek8s-tokens" ||
		e.ValueFrom.SecretKeyRef.Key != "admin-token" {
		t.Errorf("LITEK8S_TOKEN %+v, want the admin token of the Secret", e)
	}
	rotate := spec.Containers[0]
	if e := envVar(rotate.Env, "KEEP"); e == nil || e.Value != "3" {
		t.Errorf("KEEP %+v, want 3", e)
	}
	if v := volume(spec.Volumes, "backup"); v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "lk-litek8s-backup" {
		t.Errorf("backup volume %+v", v)
	}
	pvc := ms.get(t, "PersistentVolumeClaim", "lk-litek8s-backup").typed.(*corev1.PersistentVolumeClaim)
	if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "5Gi" || pvc.Spec.StorageClassName == nil ||
		*pvc.Spec.StorageClassName != "slow" || pvc.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("backup PVC %+v", pvc)
	}

	ms = h.template(chartDir(t), "--set", "backup.enabled=true", "--set", "backup.persistence.existingClaim=nfs-backups")
	if n := len(ms.ofKind("PersistentVolumeClaim")); n != 0 {
		t.Errorf("existingClaim: %d PVCs rendered", n)
	}
	spec = ms.get(t, "CronJob", "lk-litek8s-backup").typed.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template.Spec
	if v := volume(spec.Volumes, "backup"); v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "nfs-backups" {
		t.Errorf("existingClaim: backup volume %+v", v)
	}
}

// The schema refuses what cannot work among the new values, and keys it
// does not know; the template refuses node settings the chart now owns.
func TestExtrasSchemaRefuses(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	for _, tc := range []struct {
		args []string
		want string // in helm's error
	}{
		{[]string{"--set", "replicas=2"}, "replicas"},
		{[]string{"--set", "replicas=4"}, "replicas"},
		{[]string{"--set", "replicas=9"}, "replicas"},
		{[]string{"--set", "backup.enable=true"}, "enable"},
		{[]string{"--set", "backup.keep=0"}, "keep"},
		{[]string{"--set", "backup.schedule=daily"}, "schedule"},
		{[]string{"--set", "networkPolicy.allowAll=true"}, "allowAll"},
		{[]string{"--set", "updateStrategy.type=Recreate"}, "Recreate"},
		{[]string{"--set", "updateStrategy.rollingUpdate.partition=-1"}, "partition"},
		{[]string{"--set", "limits.maxRequestsInflight=-1"}, "maxRequestsInflight"},
		{[]string{"--set", "limits.requestTimeout=soon"}, "requestTimeout"},
		{[]string{"--set", "limits.maxInflight=1"}, "maxInflight"},
		{[]string{"--set", "anonymousAuth=maybe"}, "anonymousAuth"},
		{[]string{"--set", "tokenAuth.file=x"}, "file"},
		{[]string{"--set", "extraVolumeMounts[0].name=x"}, "mountPath"},
		{[]string{"--set", "config.max-requests-inflight=5"}, "max-requests-inflight"},
		{[]string{"--set", "config.token-auth-file=/x"}, "token-auth-file"},
		{[]string{"--skip-schema-validation", "--set", "config.anonymous-auth=true"}, "the chart sets \"anonymous-auth\" itself"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := h.run(append([]string{"template", release, chart, "--namespace", namespace}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// ports lists a NetworkPolicy rule's ports, comma-separated.
func ports(r networkingv1.NetworkPolicyIngressRule) string {
	var out []string
	for _, p := range r.Ports {
		out = append(out, p.Port.String())
	}
	return strings.Join(out, ",")
}
