package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// ProvisionerName is the StorageClass provisioner this program serves.
	provisionerName  = "realcluster.litek8s.io/local"
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
	// annStorageProvisioner is set on a claim by the PV controller when the
	// claim's class names an external provisioner.
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
)

// provisioner makes a `local` PersistentVolume backed by a 0777 directory
// for every pending claim that asks for provisionerName, and removes the
// directory and the volume when a Delete-policy volume is released. It polls:
// the harness's cluster holds a handful of claims.
type provisioner struct {
	client kubernetes.Interface
	dir    string // parent of the volume directories
	node   string // the node every volume is pinned to
}

func runProvisioner(ctx context.Context, args []string) error {
	var kubeconfig string
	var p provisioner
	fs := flag.NewFlagSet("provisioner", flag.ContinueOnError)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig")
	fs.StringVar(&p.dir, "dir", "", "directory holding the volumes")
	fs.StringVar(&p.node, "node", "", "node name the volumes are pinned to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if kubeconfig == "" || p.dir == "" || p.node == "" {
		return errors.New("provisioner: -kubeconfig, -dir and -node are required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	if p.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	slog.Info("provisioner started", "name", provisionerName, "dir", p.dir, "node", p.node)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := p.sync(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("provisioner sync", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// sync provisions every pending claim of ours and deletes every released
// volume of ours.
func (p *provisioner) sync(ctx context.Context) error {
	claims, err := p.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var errs []error
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.Status.Phase != corev1.ClaimPending || c.Spec.VolumeName != "" || c.DeletionTimestamp != nil {
			continue
		}
		if c.Annotations[annStorageProvisioner] != provisionerName &&
			c.Annotations[annBetaStorageProvisioner] != provisionerName {
			continue
		}
		errs = append(errs, p.provision(ctx, c))
	}
	vols, err := p.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range vols.Items {
		v := &vols.Items[i]
		if v.Annotations[annProvisionedBy] != provisionerName ||
			v.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
			continue
		}
		if v.Status.Phase == corev1.VolumeReleased || v.Status.Phase == corev1.VolumeFailed {
			errs = append(errs, p.delete(ctx, v))
		}
	}
	return errors.Join(errs...)
}

func (p *provisioner) provision(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	name := "pvc-" + string(c.UID)
	path := filepath.Join(p.dir, name)
	if err := os.MkdirAll(path, 0o777); err != nil {
		return err
	}
	// World-writable (umask aside) so that a pod running as any UID can
	// write; fsGroup is applied on top by the kubelet.
	if err := os.Chmod(path, 0o777); err != nil {
		return err
	}
	class := ""
	if c.Spec.StorageClassName != nil {
		class = *c.Spec.StorageClassName
	}
	mode := corev1.PersistentVolumeFilesystem
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{annProvisionedBy: provisionerName},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   c.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              class,
			VolumeMode:                    &mode,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: c.Namespace, Name: c.Name, UID: c.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				Local: &corev1.LocalVolumeSource{Path: path},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{p.node},
				}}}},
			}},
		},
	}
	_, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("provisioner: create %s for %s/%s: %w", name, c.Namespace, c.Name, err)
	}
	slog.Info("provisioned", "pv", name, "claim", c.Namespace+"/"+c.Name, "path", path)
	return nil
}

func (p *provisioner) delete(ctx context.Context, v *corev1.PersistentVolume) error {
	if v.Spec.Local == nil || !strings.HasPrefix(v.Spec.Local.Path, p.dir+string(filepath.Separator)) {
		return fmt.Errorf("provisioner: %s: path outside %s", v.Name, p.dir)
	}
	if err := os.RemoveAll(v.Spec.Local.Path); err != nil {
		return err
	}
	err := p.client.CoreV1().PersistentVolumes().Delete(ctx, v.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("provisioner: delete %s: %w", v.Name, err)
	}
	slog.Info("deleted", "pv", v.Name, "path", v.Spec.Local.Path)
	return nil
}
