package scheduler_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

func withClaim(claim string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
}

func createClaim(t *testing.T, cs kubernetes.Interface, ns, name, class string) {
	t.Helper()
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createLocalPV creates a volume of class pinned to node; claimRef, when
// set, pre-binds it (as a provisioner does).
func createLocalPV(t *testing.T, cs kubernetes.Interface, name, class, node string, claimRef *corev1.ObjectReference) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: class, ClaimRef: claimRef,
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/" + name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn,
					Values: []string{node}}}}}}}}}
	if _, err := cs.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSchedulerVolumes: pods whose claims are missing or unbound
// (Immediate) are Unschedulable with kube's messages and scheduled once
// the claim is bound, on the node the volume's affinity names; a
// WaitForFirstConsumer claim gets the chosen node, and the pod is bound
// there once a volume for that node is bound to the claim.
func TestSchedulerVolumes(t *testing.T) {
	c := membertest.StartCluster(t, 1, fastRetries)
	cs := c.Clientset(0)
	const ns = "default"
	for _, n := range []string{"node-a", "node-b", "node-c"} {
		createNode(t, cs, n, 2, nil)
	}

	// A claim that does not exist, then does but is unbound, then bound
	// to a volume of node-c.
	createPod(t, cs, ns, "needs-claim", 0, withClaim("data"))
	waitUnschedulable(t, cs, ns, "needs-claim", `0/3 nodes are available: persistentvolumeclaim "data" not found.`)
	createClaim(t, cs, ns, "data", "")
	waitUnschedulable(t, cs, ns, "needs-claim", "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.")
	createLocalPV(t, cs, "pv-c", "", "node-c", nil)
	if got := waitBound(t, cs, ns, "needs-claim"); got != "node-c" {
		t.Errorf("pod with a volume of node-c on %s", got)
	}

	// Volume affinity that no node meets.
	createClaim(t, cs, ns, "nowhere", "")
	createLocalPV(t, cs, "pv-gone", "", "node-gone", &corev1.ObjectReference{Namespace: ns, Name: "nowhere"})
	createPod(t, cs, ns, "stuck", 0, withClaim("nowhere"))
	waitUnschedulable(t, cs, ns, "stuck", "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity.")

	// WaitForFirstConsumer: the scheduler picks a node and writes it on
	// the claim; a provisioner makes a volume there, then the pod binds.
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := cs.StorageV1().StorageClasses().Create(t.Context(), &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "later"},
		Provisioner: "example.com/ext", VolumeBindingMode: &mode}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createClaim(t, cs, ns, "late", "later")
	createPod(t, cs, ns, "consumer", 0, withClaim("late"), func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-b"}
	})
	var uid types.UID
	membertest.Eventually(t, 20*time.Second, func() error {
		cl, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), "late", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := cl.Annotations["volume.kubernetes.io/selected-node"]; got != "node-b" {
			return fmt.Errorf("claim late: selected node %q, want node-b", got)
		}
		uid = cl.UID
		return nil
	})
	if p, err := cs.CoreV1().Pods(ns).Get(t.Context(), "consumer", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("consumer bound before its claim: %v %q", err, p.Spec.NodeName)
	}
	createLocalPV(t, cs, "pv-late", "later", "node-b", &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
		Namespace: ns, Name: "late", UID: uid})
	if got := waitBound(t, cs, ns, "consumer"); got != "node-b" {
		t.Errorf("consumer on %s, want node-b", got)
	}
}
