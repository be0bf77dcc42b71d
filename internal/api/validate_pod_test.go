package api

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
