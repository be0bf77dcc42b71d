package main

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func TestProvisioner(t *testing.T) {
	class := "realcluster-local"
	claim := func(name, provisioner string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
				Annotations: map[string]string{annStorageProvisioner: provisioner}},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: &class,
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceStorage: resource.MustParse("10Gi")}},
			},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
		}
	}
	client := fake.NewClientset(claim("ours", provisionerName), claim("theirs", "example.com/other"))
	p := &provisioner{client: client, dir: t.TempDir(), node: "n1"}
	ctx := t.Context()

	if err := p.sync(ctx); err != nil {
		t.Fatal(err)
	}
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvs.Items) != 1 {
		t.Fatalf("got %d volumes, want 1 (only for our claim)", len(pvs.Items))
	}
	pv := pvs.Items[0]
	if pv.Name != "pvc-uid-ours" || pv.Spec.ClaimRef.Name != "ours" || pv.Spec.Local == nil ||
		pv.Spec.Capacity.Storage().String() != "10Gi" || pv.Spec.StorageClassName != class {
		t.Errorf("unexpected volume: %+v", pv)
	}
	st, err := os.Stat(pv.Spec.Local.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o777 {
		t.Errorf("volume dir mode %v, want 0777", st.Mode().Perm())
	}
	if err := p.sync(ctx); err != nil { // idempotent
		t.Fatal(err)
	}

	// Released: the directory and the volume go.
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := client.CoreV1().PersistentVolumes().UpdateStatus(ctx, &pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pv.Spec.Local.Path); !os.IsNotExist(err) {
		t.Errorf("%s still there (err %v)", pv.Spec.Local.Path, err)
	}
	if pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); len(pvs.Items) != 0 {
		t.Errorf("%d volumes left", len(pvs.Items))
	}

	// A volume whose path is outside the directory is never removed.
	outside := t.TempDir()
	evil := pv.DeepCopy()
	evil.ResourceVersion = ""
	evil.Spec.Local.Path = filepath.Join(outside, "x")
	if err := os.Mkdir(evil.Spec.Local.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.delete(ctx, evil); err == nil {
		t.Error("delete of a path outside the volume dir succeeded")
	}
	if _, err := os.Stat(evil.Spec.Local.Path); err != nil {
		t.Errorf("outside path removed: %v", err)
	}
}
