package api

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAddDefaultTolerations: which existing tolerations count as
// tolerating the not-ready and unreachable NoExecute taints.
func TestAddDefaultTolerations(t *testing.T) {
	tests := []struct {
		name string
		have []corev1.Toleration
		want int // tolerations after
	}{
		{"none", nil, 2},
		{"everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, 1},
		{"any key, NoExecute", []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, 1},
		{"any key, NoSchedule", []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, 3},
		{"not-ready only", []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}}, 2},
		{"both, own seconds", []corev1.Toleration{
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tt.have}}
			addDefaultTolerations(pod)
			if len(pod.Spec.Tolerations) != tt.want {
				t.Errorf("got %+v, want %d tolerations", pod.Spec.Tolerations, tt.want)
			}
			addDefaultTolerations(pod)
			if len(pod.Spec.Tolerations) != tt.want {
				t.Errorf("a second pass added more: %+v", pod.Spec.Tolerations)
			}
		})
	}
}

// TestValidateMirrorPod: a mirror pod may not reference a service account,
// a secret or a token projection.
func TestValidateMirrorPod(t *testing.T) {
	ok := &corev1.Pod{}
	if err := validateMirrorPod(ok); err != nil {
		t.Errorf("plain mirror pod refused: %v", err)
	}
	bad := []*corev1.Pod{
		{Spec: corev1.PodSpec{ServiceAccountName: "sa"}},
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{}}}}}}},
		{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}}}}},
	}
	for i, p := range bad {
		p.Name = "m"
		if err := validateMirrorPod(p); err == nil {
			t.Errorf("case %d: mirror pod allowed", i)
		}
	}
}
