package chart

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/internal/audit"
)

// Issue 17, acceptance 6 (audit): audit.enabled renders the policy as a
// ConfigMap that the members' audit package loads, mounted where
// --audit-policy-file points, the log on the data volume with its
// rotation flags (or stdout), and a checksum that rolls the members when
// the policy changes; off, none of it.
func TestAuditValues(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)

	off := h.template(chart)
	if off.has("ConfigMap", "lk-litek8s-audit-policy") {
		t.Error("an audit policy ConfigMap with audit.enabled=false")
	}
	for _, a := range off.statefulSet(t).Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--audit-") {
			t.Errorf("audit flag %s with audit.enabled=false", a)
		}
	}

	on := h.template(chart, "--set", "audit.enabled=true", "--set", "audit.maxBackup=3")
	policy := on.configMap(t, "lk-litek8s-audit-policy").Data["policy.yaml"]
	if _, err := audit.ParsePolicy([]byte(policy)); err != nil {
		t.Fatalf("the chart's default policy does not load: %v\n%s", err, policy)
	}
	sts := on.statefulSet(t)
	c := sts.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"--audit-policy-file=/etc/litek8s-audit/policy.yaml",
		"--audit-log-path=/var/lib/litek8s/audit/audit.log", "--audit-log-maxsize=100",
		"--audit-log-maxbackup=3", "--audit-log-maxage=0"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %v lack %s", c.Args, want)
		}
	}
	var mounted bool
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == "audit-policy" && m.MountPath == "/etc/litek8s-audit")
	}
	if v := volume(sts.Spec.Template.Spec.Volumes, "audit-policy"); !mounted || v.ConfigMap == nil || v.ConfigMap.Name != "lk-litek8s-audit-policy" {
		t.Errorf("policy volume %+v mounted %v", v, mounted)
	}
	sum := sts.Spec.Template.Annotations["checksum/audit-policy"]

	// a policy of one's own, logged to stdout
	values := filepath.Join(t.TempDir(), "audit.yaml")
	if err := os.WriteFile(values, []byte(`audit:
  enabled: true
  logPath: "-"
  policy:
    apiVersion: audit.k8s.io/v1
    kind: Policy
    rules:
      - level: RequestResponse
        resources: [{group: "", resources: [configmaps]}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	mine := h.template(chart, "-f", values)
	p, err := audit.ParsePolicy([]byte(mine.configMap(t, "lk-litek8s-audit-policy").Data["policy.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Evaluate(&audit.Attributes{ResourceRequest: true, Verb: "get", Resource: "configmaps"}).Level; got != "RequestResponse" {
		t.Errorf("the given policy renders level %s for configmaps", got)
	}
	sts = mine.statefulSet(t)
	if !slices.Contains(sts.Spec.Template.Spec.Containers[0].Args, "--audit-log-path=-") {
		t.Errorf("logPath - : args %v", sts.Spec.Template.Spec.Containers[0].Args)
	}
	if s := sts.Spec.Template.Annotations["checksum/audit-policy"]; s == "" || s == sum {
		t.Errorf("checksum/audit-policy %q does not change with the policy (was %q)", s, sum)
	}

	// the schema refuses what cannot work
	for _, tc := range []struct{ arg, want string }{
		{"audit.logPath=relative/audit.log", "logPath"},
		{"audit.maxBackup=-1", "maxBackup"},
		{"audit.policy.kind=Pod", "kind"},
		{"audit.enable=true", "enable"},
	} {
		if _, err := h.run("template", release, chart, "--namespace", namespace, "--set", tc.arg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: got %v, want an error naming %q", tc.arg, err, tc.want)
		}
	}
}
