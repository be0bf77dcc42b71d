package table

import (
	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// betaStorageClassAnnotation names a PV's or PVC's class before
// storageClassName; kube's printers still prefer it.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

var persistentVolumeColumns = []Column{
	nameColumn,
	{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]},
	{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]},
	{Name: "Reclaim Policy", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]},
	{Name: "Status", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]},
	{Name: "Claim", Type: "string", Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pv"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pv"},
	{Name: "Reason", Type: "string", Description: corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]},
	ageColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]},
}

// persistentVolumeCells follows kube's printPersistentVolume.
func persistentVolumeCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(quantity(o.spec.Get("capacity.storage")))
	w.str(accessModes(o.spec.Get("accessModes")))
	w.str(o.spec.Get("persistentVolumeReclaimPolicy").String())
	w.str(volumePhase(o))
	claim := ""
	if ref := o.spec.Get("claimRef"); ref.IsObject() {
		claim = ref.Get("namespace").String() + "/" + ref.Get("name").String()
	}
	w.str(claim)
	w.str(storageClass(o))
	w.optional(o.spec.Get("volumeAttributesClassName"), "<unset>")
	w.str(o.status.Get("reason").String())
	w.age(o.created)
	w.optional(o.spec.Get("volumeMode"), "<unset>")
}

var persistentVolumeClaimColumns = []Column{
	nameColumn,
	{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
	{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
	{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
	{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
	{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
	{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
	ageColumn,
	{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
}

// persistentVolumeClaimCells follows kube's printPersistentVolumeClaim:
// capacity and access modes come from the status once the claim is bound.
func persistentVolumeClaimCells(o *object, w *rowWriter) {
	volume := o.spec.Get("volumeName").String()
	capacity, modes := "", ""
	if volume != "" {
		capacity = quantity(o.status.Get("capacity.storage"))
		modes = accessModes(o.status.Get("accessModes"))
	}
	w.str(o.name)
	w.str(volumePhase(o))
	w.str(volume)
	w.str(capacity)
	w.str(modes)
	w.str(storageClass(o))
	w.optional(o.spec.Get("volumeAttributesClassName"), "<unset>")
	w.age(o.created)
	w.optional(o.spec.Get("volumeMode"), "<unset>")
}

// volumePhase is status.phase, or Terminating once deletion started.
func volumePhase(o *object) string {
	if o.deleting {
		return "Terminating"
	}
	return o.status.Get("phase").String()
}

// storageClass is the beta annotation's class, else spec.storageClassName.
func storageClass(o *object) string {
	if a := memberOf(o.annotations, betaStorageClassAnnotation); a.Exists() {
		return a.String()
	}
	return o.spec.Get("storageClassName").String()
}

// accessModes renders access modes as kube's GetAccessModesAsString: the
// abbreviations of those present, in a fixed order.
func accessModes(modes gjson.Result) string {
	has := func(m string) bool {
		found := false
		forEachElem(modes, func(v gjson.Result) bool {
			found = v.String() == m
			return !found
		})
		return found
	}
	var out []byte
	for _, m := range []struct{ mode, abbr string }{
		{"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"},
	} {
		if has(m.mode) {
			if len(out) > 0 {
				out = append(out, ',')
			}
			out = append(out, m.abbr...)
		}
	}
	return string(out)
}

// quantity renders a resource quantity in canonical form ("1Gi", "500m");
// absent is "0", like a zero Quantity.
func quantity(v gjson.Result) string {
	if !v.Exists() {
		return "0"
	}
	q, err := resource.ParseQuantity(v.String())
	if err != nil {
		return v.String()
	}
	return q.String()
}

var storageClassColumns = []Column{
	nameColumn,
	{Name: "Provisioner", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["provisioner"]},
	{Name: "ReclaimPolicy", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]},
	{Name: "VolumeBindingMode", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]},
	{Name: "AllowVolumeExpansion", Type: "string", Description: storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]},
	ageColumn,
}

// storageClassCells follows kube's printStorageClass, with defaults Delete
// and Immediate. Kube marks the effective default class of a list " (default)":
// the newest class with the is-default-class annotation. Cells are computed
// per object here, so every class with the annotation set to "true" is
// marked, in lists and single GETs alike (see isDefaultClass).
func storageClassCells(o *object, w *rowWriter) {
	name := o.name
	if isDefaultClass(o, "storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class") {
		name += " (default)"
	}
	w.str(name)
	w.str(o.get("provisioner").String())
	w.strOr(o.get("reclaimPolicy").String(), "Delete")
	w.strOr(o.get("volumeBindingMode").String(), "Immediate")
	w.boolean(o.get("allowVolumeExpansion").Bool())
	w.age(o.created)
}

// isDefaultClass reports whether one of the annotations is "true".
func isDefaultClass(o *object, annotations ...string) bool {
	for _, a := range annotations {
		if memberOf(o.annotations, a).String() == "true" {
			return true
		}
	}
	return false
}
