package member_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// TestEphemeralContainersAndResize writes pods/ephemeralcontainers and
// pods/resize through a follower: only what each may change changes, and
// kube's validation refuses the rest.
func TestEphemeralContainersAndResize(t *testing.T) {
	c := membertest.StartCluster(t, 3)
	f := c.Follower()
	cs := c.Clientset(f)
	ctx := t.Context()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	pod, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := cs.CoreV1().Pods("default")

	t.Run("ephemeralcontainers", func(t *testing.T) {
		patch := `{"metadata":{"labels":{"sneaky":"yes"}},"spec":{"ephemeralContainers":[{"name":"dbg","image":"busybox",` +
			`"targetContainerName":"c","stdin":true,"tty":true}],"containers":[{"name":"c","image":"evil"}]}}`
		got, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "ephemeralcontainers")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.EphemeralContainers) != 1 || got.Spec.EphemeralContainers[0].TargetContainerName != "c" ||
			got.Labels["sneaky"] != "" || got.Spec.Containers[0].Image != "nginx" || got.Generation != pod.Generation+1 {
			t.Fatalf("after the patch: labels %v, containers %+v, ephemeral %+v, generation %d", got.Labels,
				got.Spec.Containers, got.Spec.EphemeralContainers, got.Generation)
		}
		e := &corev1.Pod{}
		err = cs.CoreV1().RESTClient().Get().Namespace("default").Resource("pods").Name("web").
			SubResource("ephemeralcontainers").Do(ctx).Into(e)
		if err != nil || len(e.Spec.EphemeralContainers) != 1 {
			t.Fatalf("GET ephemeralcontainers: %v", err)
		}
		for _, tc := range []struct{ name, patch, want string }{
			{"changed", `{"spec":{"ephemeralContainers":[{"name":"dbg","image":"alpine"}]}}`,
				`existing ephemeral containers "dbg" may not be changed`},
			{"ports", `{"spec":{"ephemeralContainers":[{"name":"dbg2","image":"busybox","ports":[{"containerPort":80}]}]}}`,
				"ports: Forbidden: cannot be set for an Ephemeral Container"},
			{"target", `{"spec":{"ephemeralContainers":[{"name":"dbg3","image":"busybox","targetContainerName":"nope"}]}}`,
				`targetContainerName: Not found: "nope"`},
			{"duplicate", `{"spec":{"ephemeralContainers":[{"name":"c","image":"busybox"}]}}`,
				`name: Duplicate value: "c"`},
		} {
			_, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(tc.patch), metav1.PatchOptions{}, "ephemeralcontainers")
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want 422 with %q", tc.name, err, tc.want)
			}
		}
	})

	t.Run("resize", func(t *testing.T) {
		before, err := pods.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		patch := `{"metadata":{"labels":{"sneaky":"yes"}},"spec":{"containers":[{"name":"c","image":"evil",` +
			`"resources":{"requests":{"cpu":"200m"},"limits":{"cpu":"200m"}}}]}}`
		got, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
		if err != nil {
			t.Fatal(err)
		}
		cpu := got.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
		if cpu.String() != "200m" || got.Spec.Containers[0].Image != "nginx" || got.Labels["sneaky"] != "" ||
			got.Generation != before.Generation+1 {
			t.Fatalf("after the resize: %+v labels %v generation %d", got.Spec.Containers[0], got.Labels, got.Generation)
		}
		for _, tc := range []struct{ name, patch, want string }{
			{"qos", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}]}}`,
				"Pod QOS Class may not change as a result of resizing"},
			{"removed", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":null},"limits":{"memory":null}}}]}}`,
				"spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"},
			{"other resource", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"ephemeral-storage":"1Gi"},"limits":{"ephemeral-storage":"1Gi"}}}]}}`,
				"spec: Forbidden: only cpu and memory resources are mutable"},
			{"added container", `{"spec":{"containers":[{"name":"d","image":"x"}]}}`,
				"spec.containers: Forbidden: containers may not be added or removed on resize"},
		} {
			_, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(tc.patch), metav1.PatchOptions{}, "resize")
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want 422 with %q", tc.name, err, tc.want)
			}
		}
	})

	t.Run("kubectl debug", func(t *testing.T) {
		if _, err := exec.LookPath("kubectl"); err != nil {
			t.Skip("kubectl not on PATH")
		}
		dir := t.TempDir()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, "kubectl", "--kubeconfig", c.Kubeconfig(f), "--cache-dir", filepath.Join(dir, "cache"),
			"debug", "web", "--image=busybox", "--target=c", "-c", "kdbg")
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl debug: %v\n%s", err, out)
		}
		got, err := pods.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, e := range got.Spec.EphemeralContainers {
			found = found || e.Name == "kdbg" && e.Image == "busybox" && e.TargetContainerName == "c"
		}
		if !found {
			t.Fatalf("kubectl debug added no container kdbg: %+v\n%s", got.Spec.EphemeralContainers, out)
		}
	})
}
