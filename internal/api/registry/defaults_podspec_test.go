package registry

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
)

// TestDefaultPodSpecParts: kube's SetObjectDefaults_Pod walk on a spec
// with every kind of nested default, and a second run changing nothing.
func TestDefaultPodSpecParts(t *testing.T) {
	in := `{"spec":{"serviceAccount":"old","hostNetwork":true,"terminationGracePeriodSeconds":-5,
	"volumes":[{"name":"e"},{"name":"hp","hostPath":{"path":"/x"}},
	 {"name":"p","projected":{"sources":[{"serviceAccountToken":{"path":"t"}},{"downwardAPI":{"items":[{"path":"l","fieldRef":{"fieldPath":"metadata.labels"}}]}}]}},
	 {"name":"eph","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}}],
	"containers":[{"name":"c","image":"i:latest","ports":[{"containerPort":80}],
	 "resources":{"limits":{"cpu":"0.0001"}},
	 "livenessProbe":{"grpc":{"port":9}},
	 "lifecycle":{"preStop":{"httpGet":{"port":1}}},
	 "env":[{"name":"F","valueFrom":{"fileKeyRef":{"volumeName":"e","path":"p","key":"k"}}}]}],
	"ephemeralContainers":[{"name":"dbg","image":"d","env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}]}}`
	pod := &corev1.Pod{}
	if err := json.Unmarshal([]byte(in), pod); err != nil {
		t.Fatal(err)
	}
	defaultPod(pod)
	sp := pod.Spec
	checks := []struct {
		name string
		ok   bool
	}{
		{"serviceAccountName from serviceAccount", sp.ServiceAccountName == "old" && sp.DeprecatedServiceAccount == "old"},
		{"negative grace period is 1", *sp.TerminationGracePeriodSeconds == 1},
		{"sourceless volume is emptyDir", sp.Volumes[0].EmptyDir != nil},
		{"hostPath type", sp.Volumes[1].HostPath.Type != nil && *sp.Volumes[1].HostPath.Type == corev1.HostPathUnset},
		{"projected defaultMode", *sp.Volumes[2].Projected.DefaultMode == 420},
		{"token expiration 1h", *sp.Volumes[2].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds == 3600},
		{"projected fieldRef v1", sp.Volumes[2].Projected.Sources[1].DownwardAPI.Items[0].FieldRef.APIVersion == "v1"},
		{"ephemeral claim volumeMode", *sp.Volumes[3].Ephemeral.VolumeClaimTemplate.Spec.VolumeMode == corev1.PersistentVolumeFilesystem},
		{"hostNetwork host port", sp.Containers[0].Ports[0].HostPort == 80},
		{"pull policy of :latest", sp.Containers[0].ImagePullPolicy == corev1.PullAlways},
		{"limits rounded up to milli", sp.Containers[0].Resources.Limits.Cpu().Cmp(apiresource.MustParse("1m")) == 0},
		{"requests from limits", sp.Containers[0].Resources.Requests.Cpu().Cmp(apiresource.MustParse("1m")) == 0},
		{"grpc probe service", sp.Containers[0].LivenessProbe.GRPC.Service != nil && sp.Containers[0].LivenessProbe.PeriodSeconds == 10},
		{"lifecycle httpGet", sp.Containers[0].Lifecycle.PreStop.HTTPGet.Path == "/" && sp.Containers[0].Lifecycle.PreStop.HTTPGet.Scheme == "HTTP"},
		{"fileKeyRef optional", sp.Containers[0].Env[0].ValueFrom.FileKeyRef.Optional != nil && !*sp.Containers[0].Env[0].ValueFrom.FileKeyRef.Optional},
		{"ephemeral container defaults", sp.EphemeralContainers[0].TerminationMessagePolicy == corev1.TerminationMessageReadFile &&
			sp.EphemeralContainers[0].Env[0].ValueFrom.FieldRef.APIVersion == "v1"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not defaulted", c.name)
		}
	}
	once, _ := json.Marshal(pod)
	defaultPod(pod)
	if twice, _ := json.Marshal(pod); string(twice) != string(once) {
		t.Errorf("defaultPod is not idempotent\nonce:  %s\ntwice: %s", once, twice)
	}
}

func TestPodQOS(t *testing.T) {
	rr := func(req, lim string) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{}
		if req != "" {
			r.Requests = corev1.ResourceList{"cpu": apiresource.MustParse(req), "memory": apiresource.MustParse(req)}
		}
		if lim != "" {
			r.Limits = corev1.ResourceList{"cpu": apiresource.MustParse(lim), "memory": apiresource.MustParse(lim)}
		}
		return r
	}
	tests := []struct {
		name       string
		containers []corev1.ResourceRequirements
		want       corev1.PodQOSClass
	}{
		{"none", []corev1.ResourceRequirements{{}}, corev1.PodQOSBestEffort},
		{"equal", []corev1.ResourceRequirements{rr("1", "1")}, corev1.PodQOSGuaranteed},
		{"requests only", []corev1.ResourceRequirements{rr("1", "")}, corev1.PodQOSBurstable},
		{"guaranteed and besteffort", []corev1.ResourceRequirements{rr("1", "1"), {}}, corev1.PodQOSBurstable},
		{"cpu only", []corev1.ResourceRequirements{{Limits: corev1.ResourceList{"cpu": apiresource.MustParse("1")},
			Requests: corev1.ResourceList{"cpu": apiresource.MustParse("1")}}}, corev1.PodQOSBurstable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := &corev1.PodSpec{}
			for _, r := range tt.containers {
				sp.Containers = append(sp.Containers, corev1.Container{Resources: r})
			}
			if got := podQOS(sp); got != tt.want {
				t.Errorf("podQOS = %s, want %s", got, tt.want)
			}
		})
	}
}
