package pvbinder_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

const ns = "default"

type pvOpt func(*corev1.PersistentVolume)

func class(name string) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.StorageClassName = name }
}

func modes(m ...corev1.PersistentVolumeAccessMode) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = m }
}

func reclaim(p corev1.PersistentVolumeReclaimPolicy) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = p }
}

func labelled(k, v string) pvOpt {
	return func(pv *corev1.PersistentVolume) { pv.Labels = map[string]string{k: v} }
}

func reservedFor(claim string) pvOpt {
	return func(pv *corev1.PersistentVolume) {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim}
	}
}

func createPV(t *testing.T, cs kubernetes.Interface, name, size string, opts ...pvOpt) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}}}}
	for _, o := range opts {
		o(pv)
	}
	if _, err := cs.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

type claimOpt func(*corev1.PersistentVolumeClaim)

func claimClass(name string) claimOpt {
	return func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = &name }
}

func createClaim(t *testing.T, cs kubernetes.Interface, name, size string, opts ...claimOpt) *corev1.PersistentVolumeClaim {
	t.Helper()
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
	for _, o := range opts {
		o(c)
	}
	c, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitBound waits until claim is bound to volume, both sides complete.
func waitBound(t *testing.T, cs kubernetes.Interface, claim, volume string) {
	t.Helper()
	membertest.Eventually(t, 20*time.Second, func() error {
		c, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), claim, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(t.Context(), volume, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ref := pv.Spec.ClaimRef
		capacity := pv.Spec.Capacity[corev1.ResourceStorage]
		got := c.Status.Capacity[corev1.ResourceStorage]
		switch {
		case c.Spec.VolumeName != volume || c.Status.Phase != corev1.ClaimBound:
			return fmt.Errorf("claim %s: volumeName %q phase %s", claim, c.Spec.VolumeName, c.Status.Phase)
		case c.Annotations["pv.kubernetes.io/bind-completed"] != "yes":
			return fmt.Errorf("claim %s: annotations %v", claim, c.Annotations)
		case got.Cmp(capacity) != 0 || len(c.Status.AccessModes) != len(pv.Spec.AccessModes):
			return fmt.Errorf("claim %s: status %+v, volume capacity %s modes %v", claim, c.Status, capacity.String(), pv.Spec.AccessModes)
		case ref == nil || ref.Name != claim || ref.Namespace != ns || ref.UID != c.UID || ref.Kind != "PersistentVolumeClaim":
			return fmt.Errorf("volume %s: claimRef %+v, want %s/%s uid %s", volume, ref, ns, claim, c.UID)
		case pv.Status.Phase != corev1.VolumeBound:
			return fmt.Errorf("volume %s: phase %s", volume, pv.Status.Phase)
		}
		return nil
	})
}

func waitVolumePhase(t *testing.T, cs kubernetes.Interface, name string, phase corev1.PersistentVolumePhase) *corev1.PersistentVolume {
	t.Helper()
	var pv *corev1.PersistentVolume
	membertest.Eventually(t, 20*time.Second, func() (err error) {
		if pv, err = cs.CoreV1().PersistentVolumes().Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if pv.Status.Phase != phase {
			return fmt.Errorf("volume %s: phase %s, want %s", name, pv.Status.Phase, phase)
		}
		return nil
	})
	return pv
}

// staysPending checks for a while that the claim remains Pending, its
// binding not completed.
func staysPending(t *testing.T, cs kubernetes.Interface, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	var c *corev1.PersistentVolumeClaim
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		var err error
		if c, err = cs.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if c.Annotations["pv.kubernetes.io/bind-completed"] != "" || c.Status.Phase != corev1.ClaimPending {
			t.Fatalf("claim %s: bound to %q, phase %s; want it Pending", name, c.Spec.VolumeName, c.Status.Phase)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c
}

func deleteClaim(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createClass(t *testing.T, cs kubernetes.Interface, name, provisioner string, mode storagev1.VolumeBindingMode, dflt bool) {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if dflt {
		sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	}
	if _, err := cs.StorageV1().StorageClasses().Create(t.Context(), sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestBinding: claims bind to the smallest matching volume and never to
// a mismatching one, pre-bound claims and volumes bind to each other,
// and a deleted claim releases its volume per its reclaim policy.
func TestBinding(t *testing.T) {
	c := membertest.StartCluster(t, 1, func(cfg *member.Config) {
		cfg.Controllers.Storage.PVBinder.Resync = time.Second
	})
	cs := c.Clientset(0)

	// Mismatches of every kind, one match and a bigger match.
	createPV(t, cs, "small", "500Mi")
	createPV(t, cs, "other-class", "1Gi", class("other"))
	createPV(t, cs, "rwx-only", "1Gi", modes(corev1.ReadWriteMany))
	createPV(t, cs, "unlabelled", "1Gi", labelled("tier", "slow"))
	createPV(t, cs, "big", "5Gi")
	createPV(t, cs, "fits", "2Gi")
	// The binder chooses among the volumes it has seen: wait until it has
	// marked every one Available, or it may bind "big" before "fits" arrives.
	for _, name := range []string{"small", "other-class", "rwx-only", "unlabelled", "big", "fits"} {
		waitVolumePhase(t, cs, name, corev1.VolumeAvailable)
	}
	createClaim(t, cs, "data", "1Gi", func(c *corev1.PersistentVolumeClaim) {
		c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"slow"}}}}
	})
	waitBound(t, cs, "data", "fits")
	pv, _ := cs.CoreV1().PersistentVolumes().Get(t.Context(), "fits", metav1.GetOptions{})
	if pv.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" {
		t.Errorf("volume fits: annotations %v", pv.Annotations)
	}
	for _, name := range []string{"small", "other-class", "rwx-only", "unlabelled", "big"} {
		waitVolumePhase(t, cs, name, corev1.VolumeAvailable)
	}

	// A claim asking for more than any free volume stays Pending, with
	// kube's event.
	createClaim(t, cs, "huge", "100Gi")
	staysPending(t, cs, "huge")
	waitEvent(t, cs, "huge", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")

	// A volume reserved for a claim goes to it, not to a better fit.
	createPV(t, cs, "reserved", "8Gi", reservedFor("wants-any"))
	createClaim(t, cs, "wants-any", "1Gi")
	waitBound(t, cs, "wants-any", "reserved")

	// A claim naming its volume.
	createClaim(t, cs, "named", "1Gi", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "big" })
	waitBound(t, cs, "named", "big")
	if c, _ := cs.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), "named", metav1.GetOptions{}); c.Annotations["pv.kubernetes.io/bound-by-controller"] != "" {
		t.Errorf("claim named by its user: annotations %v", c.Annotations)
	}
	// … and one naming a volume that does not fit.
	createClaim(t, cs, "named-small", "1Gi", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "small" })
	staysPending(t, cs, "named-small")
	waitEvent(t, cs, "named-small", "VolumeMismatch", `Cannot bind to requested volume "small": requested PV is too small`)

	// Released on claim delete: Retain keeps it Released; Recycle fails.
	deleteClaim(t, cs, "data")
	pv = waitVolumePhase(t, cs, "fits", corev1.VolumeReleased)
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "data" {
		t.Errorf("released volume: claimRef %+v, want it kept", pv.Spec.ClaimRef)
	}
	createPV(t, cs, "recycled", "20Gi", reclaim(corev1.PersistentVolumeReclaimRecycle))
	createClaim(t, cs, "scratch", "20Gi")
	waitBound(t, cs, "scratch", "recycled")
	deleteClaim(t, cs, "scratch")
	pv = waitVolumePhase(t, cs, "recycled", corev1.VolumeFailed)
	if pv.Status.Reason != "VolumeFailedRecycle" {
		t.Errorf("recycled volume: status %+v", pv.Status)
	}
	// The huge claim finds nothing still: the released volumes are not
	// handed out again.
	staysPending(t, cs, "huge")

	// A bound claim whose volume is deleted is Lost.
	if err := cs.CoreV1().PersistentVolumes().Delete(t.Context(), "reserved", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The volume stays Terminating while bound (pv-protection); take the
	// finalizer off as an administrator forcing it would.
	if _, err := cs.CoreV1().PersistentVolumes().Patch(t.Context(), "reserved", "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		cl, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), "wants-any", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cl.Status.Phase != corev1.ClaimLost {
			return fmt.Errorf("claim of a deleted volume: phase %s", cl.Status.Phase)
		}
		return nil
	})
}

// TestProvisioning: with no matching volume, a claim of a class with an
// external provisioner is annotated for it, and the volume the
// provisioner creates (pre-bound) is bound; a WaitForFirstConsumer claim
// waits for the scheduler's selected node; a claim without a class gets
// the default class.
func TestProvisioning(t *testing.T) {
	c := membertest.StartCluster(t, 1)
	cs := c.Clientset(0)
	const prov = "example.com/ext"
	createClass(t, cs, "ext", prov, storagev1.VolumeBindingImmediate, false)
	createClass(t, cs, "later", prov, storagev1.VolumeBindingWaitForFirstConsumer, false)
	createClass(t, cs, "intree", "kubernetes.io/no-provisioner", storagev1.VolumeBindingImmediate, false)

	claim := createClaim(t, cs, "dyn", "1Gi", claimClass("ext"))
	waitProvisionerAnnotation(t, cs, "dyn", prov)
	waitEvent(t, cs, "dyn", "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner 'example.com/ext' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.")
	// What test/realcluster/rctool/provisioner.go does.
	createPV(t, cs, "pvc-"+string(claim.UID), "1Gi", class("ext"), reclaim(corev1.PersistentVolumeReclaimDelete),
		func(pv *corev1.PersistentVolume) {
			pv.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": prov}
			pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns,
				Name: "dyn", UID: claim.UID}
		})
	waitBound(t, cs, "dyn", "pvc-"+string(claim.UID))
	// Deleted with its claim: left Released for the provisioner to delete.
	deleteClaim(t, cs, "dyn")
	waitVolumePhase(t, cs, "pvc-"+string(claim.UID), corev1.VolumeReleased)

	// An in-tree provisioner is not available.
	createClaim(t, cs, "local", "1Gi", claimClass("intree"))
	waitEvent(t, cs, "local", "ProvisioningFailed", "no volume plugin matched name: kubernetes.io/no-provisioner")

	// WaitForFirstConsumer: nothing until a node is selected.
	createClaim(t, cs, "late", "1Gi", claimClass("later"))
	waitEvent(t, cs, "late", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
	if cl := staysPending(t, cs, "late"); cl.Annotations["volume.kubernetes.io/storage-provisioner"] != "" {
		t.Fatalf("claim waiting for its consumer: annotations %v", cl.Annotations)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Patch(t.Context(), "late", "application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"volume.kubernetes.io/selected-node":"node-a"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitProvisionerAnnotation(t, cs, "late", prov)

	// WaitForFirstConsumer with static volumes: bound to the one of the
	// selected node.
	createClass(t, cs, "local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer, false)
	for _, n := range []string{"node-a", "node-b"} {
		if _, err := cs.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n,
			Labels: map[string]string{"kubernetes.io/hostname": n}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createPV(t, cs, "local-"+n, "1Gi", class("local"), func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt/disk"}
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn,
					Values: []string{n}}}}}}}
		})
	}
	createClaim(t, cs, "pinned", "1Gi", claimClass("local"), func(c *corev1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{"volume.kubernetes.io/selected-node": "node-b"}
	})
	waitBound(t, cs, "pinned", "local-node-b")

	// The default class, set on a claim that names none.
	createClass(t, cs, "standard", prov, storagev1.VolumeBindingImmediate, true)
	if cl := createClaim(t, cs, "plain", "1Gi"); cl.Spec.StorageClassName == nil || *cl.Spec.StorageClassName != "standard" {
		t.Fatalf("claim without a class: storageClassName %v, want the default", cl.Spec.StorageClassName)
	}
	waitProvisionerAnnotation(t, cs, "plain", prov)
	// An explicit "" is no class.
	if cl := createClaim(t, cs, "classless", "1Gi", claimClass("")); *cl.Spec.StorageClassName != "" {
		t.Fatalf("claim with class \"\": storageClassName %q", *cl.Spec.StorageClassName)
	}
}

func waitProvisionerAnnotation(t *testing.T, cs kubernetes.Interface, name, prov string) {
	t.Helper()
	membertest.Eventually(t, 20*time.Second, func() error {
		cl, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		a := cl.Annotations
		if a["volume.kubernetes.io/storage-provisioner"] != prov || a["volume.beta.kubernetes.io/storage-provisioner"] != prov {
			return fmt.Errorf("claim %s: annotations %v, want the provisioner %s", name, a, prov)
		}
		return nil
	})
}

func waitEvent(t *testing.T, cs kubernetes.Interface, name, reason, msg string) {
	t.Helper()
	membertest.Eventually(t, 20*time.Second, func() error {
		l, err := cs.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		var got []string
		for _, e := range l.Items {
			if e.Reason == reason && e.Message == msg && e.Source.Component == "persistent-volume-binder" {
				return nil
			}
			got = append(got, e.Reason+": "+e.Message)
		}
		return fmt.Errorf("events of %s: %q, want %s: %s", name, got, reason, msg)
	})
}
