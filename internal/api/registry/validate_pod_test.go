package registry

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A pod with malformed sysctl names is refused, naming each (the e2e
// Sysctls spec "should reject invalid sysctls"); well-formed names, safe
// or not, are the kubelet's to allow.
func TestValidatePodSysctls(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		RestartPolicy: corev1.RestartPolicyAlways,
		SecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
			{Name: "foo-", Value: "bar"}, {Name: "kernel.shmmax", Value: "1"},
			{Name: "safe-and-unsafe", Value: "1"}, {Name: "bar..", Value: "42"}, {Name: "kernel.shmmax", Value: "2"},
			{Name: "net/ipv4/ip_forward", Value: "1"},
		}},
	}}
	errs := validatePod(pod, nil)
	msg := errs.ToAggregate().Error()
	for _, want := range []string{`spec.securityContext.sysctls[0].name: Invalid value: "foo-"`,
		`spec.securityContext.sysctls[3].name: Invalid value: "bar.."`,
		`spec.securityContext.sysctls[4].name: Duplicate value: "kernel.shmmax"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors %q lack %q", msg, want)
		}
	}
	if len(errs) != 3 {
		t.Errorf("%d errors, want 3: %v", len(errs), errs)
	}
	pod.Spec.SecurityContext.Sysctls = pod.Spec.SecurityContext.Sysctls[1:3]
	if errs := validatePod(pod, nil); len(errs) != 0 {
		t.Errorf("well-formed sysctls refused: %v", errs)
	}
}

// podCertificate projections: an expiry between an hour and 24 hours for
// a kubernetes.io signer (91 days for others), a known key type.
func TestValidatePodCertificates(t *testing.T) {
	vol := func(signer, key string, secs int32) corev1.Volume {
		return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{
				SignerName: signer, KeyType: key, MaxExpirationSeconds: &secs, CredentialBundlePath: "b"}}}}}}
	}
	for _, tt := range []struct {
		v    corev1.Volume
		want string // "" valid
	}{
		{vol("example.com/spiffe", "ED25519", 3600), ""},
		{vol("example.com/spiffe", "ED25519", 91*24*3600), ""},
		{vol("example.com/spiffe", "ED25519", 1800), "must be >= 3600"},
		{vol("example.com/spiffe", "ED25519", 92*24*3600), "must be <= 7862400"},
		{vol("kubernetes.io/kube-apiserver-client-pod", "ECDSAP256", 25*3600), "must be <= 86400"},
		{vol("example.com/spiffe", "DSA", 3600), `Unsupported value: "DSA"`},
		{vol("", "ED25519", 3600), "signerName: Required value"},
	} {
		errs := validatePodCertificates([]corev1.Volume{tt.v}, field.NewPath("spec", "volumes"))
		got := errs.ToAggregate()
		switch {
		case tt.want == "" && got != nil:
			t.Errorf("%+v refused: %v", tt.v.Projected.Sources[0].PodCertificate, got)
		case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
			t.Errorf("%+v: %v, want %q", tt.v.Projected.Sources[0].PodCertificate, got, tt.want)
		}
	}
}
