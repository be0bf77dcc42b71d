package table

import (
	"github.com/tidwall/gjson"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
)

// Printers of the CSI kinds of storage.k8s.io and of
// VolumeAttributesClass.

var csiDriverColumns = []Column{
	nameColumn,
	{Name: "AttachRequired", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"]},
	{Name: "PodInfoOnMount", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"]},
	{Name: "StorageCapacity", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"]},
	{Name: "TokenRequests", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"]},
	{Name: "RequiresRepublish", Type: "boolean", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"]},
	{Name: "Modes", Type: "string", Description: storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"]},
	ageColumn,
}

// csiDriverCells follows kube's printCSIDriver: unset booleans print as
// their defaults (attachRequired true), token requests as their
// audiences or "<unset>".
func csiDriverCells(o *object, w *rowWriter) {
	w.str(o.name)
	attach := o.spec.Get("attachRequired")
	w.boolean(!present(attach) || attach.Bool())
	w.boolean(o.spec.Get("podInfoOnMount").Bool())
	w.boolean(o.spec.Get("storageCapacity").Bool())
	tokens := "<unset>"
	if tr := o.spec.Get("tokenRequests"); tr.IsArray() {
		var auds []string
		forEachElem(tr, func(t gjson.Result) bool {
			auds = append(auds, t.Get("audience").String())
			return true
		})
		tokens = strings.Join(auds, ",")
	}
	w.str(tokens)
	w.boolean(o.spec.Get("requiresRepublish").Bool())
	w.strOr(strings.Join(stringArray(o.spec.Get("volumeLifecycleModes")), ","), "<none>")
	w.age(o.created)
}

var csiNodeColumns = []Column{
	nameColumn,
	{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
	ageColumn,
}

// csiNodeCells follows kube's printCSINode.
func csiNodeCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.num(countElems(o.spec.Get("drivers")))
	w.age(o.created)
}

var csiStorageCapacityColumns = []Column{
	nameColumn,
	{Name: "StorageClassName", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]},
	{Name: "Capacity", Type: "string", Description: storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]},
}

// csiStorageCapacityCells follows kube's printCSIStorageCapacity (no Age
// column).
func csiStorageCapacityCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.get("storageClassName").String())
	capacity := "<unset>"
	if c := o.get("capacity"); present(c) {
		capacity = quantity(c)
	}
	w.str(capacity)
}

var volumeAttachmentColumns = []Column{
	nameColumn,
	{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
	{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
	{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
	{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
	ageColumn,
}

// volumeAttachmentCells follows kube's printVolumeAttachment.
func volumeAttachmentCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.spec.Get("attacher").String())
	w.str(o.spec.Get("source.persistentVolumeName").String())
	w.str(o.spec.Get("nodeName").String())
	w.boolean(o.status.Get("attached").Bool())
	w.age(o.created)
}

var volumeAttributesClassColumns = []Column{
	nameColumn,
	{Name: "DriverName", Type: "string", Description: storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]},
	ageColumn,
}

// volumeAttributesClassCells follows kube's printVolumeAttributesClass.
func volumeAttributesClassCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.get("driverName").String())
	w.age(o.created)
}
