package chart

import (
	"slices"
	"strings"
	"testing"
)

// encryption.enabled mounts encryption.existingSecret and passes the
// configuration in it to every member; without the Secret the chart
// refuses to render.
func TestEncryptionValues(t *testing.T) {
	h := newHelm(t)
	chart := chartDir(t)
	sts := h.template(chart).statefulSet(t)
	if volume(sts.Spec.Template.Spec.Volumes, "encryption").Name != "" ||
		slices.ContainsFunc(sts.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--encryption-provider-config") }) {
		t.Fatal("encryption configured by default")
	}
	sts = h.template(chart, "--set", "encryption.enabled=true", "--set", "encryption.existingSecret=enc",
		"--set", "encryption.secretKey=conf.yaml").statefulSet(t)
	c := sts.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--encryption-provider-config=/etc/litek8s-encryption/conf.yaml") {
		t.Errorf("args %v", c.Args)
	}
	v := volume(sts.Spec.Template.Spec.Volumes, "encryption")
	if v == nil || v.Secret == nil || v.Secret.SecretName != "enc" {
		t.Fatalf("encryption volume %+v", v)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == "encryption" && m.MountPath == "/etc/litek8s-encryption" && m.ReadOnly)
	}
	if !mounted {
		t.Errorf("mounts %+v", c.VolumeMounts)
	}
	out := h.must("lint", "--strict", chart, "--set", "encryption.enabled=true", "--set", "encryption.existingSecret=enc")
	if !strings.Contains(out, "0 chart(s) failed") {
		t.Errorf("helm lint:\n%s", out)
	}
	_, err := h.run("template", release, chart, "--namespace", namespace, "--set", "encryption.enabled=true")
	if err == nil || !strings.Contains(err.Error(), "encryption.existingSecret") {
		t.Errorf("enabled without a Secret: %v", err)
	}
}
