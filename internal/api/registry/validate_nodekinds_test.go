package registry

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestValidateNodeKinds: the causes the kinds a kubelet, kube-proxy and
// DRA drivers use give, as kube's validation words them ("field: type").
func TestValidateNodeKinds(t *testing.T) {
	reg := New(Builtin())
	om := metav1.ObjectMeta{Name: "x"}
	str := func(s string) *string { return &s }
	boolean := func(b bool) *bool { return &b }
	obj := func(o runtime.Object) func(*testing.T) runtime.Object {
		return func(*testing.T) runtime.Object { return o }
	}
	csiNode := func(id string, count int32) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: om, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: "csi.example.com", NodeID: id, Allocatable: &storagev1.VolumeNodeResources{Count: &count}}}}}
	}
	va := func(node string) *storagev1.VolumeAttachment {
		return &storagev1.VolumeAttachment{ObjectMeta: om, Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com",
			NodeName: node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: str("pv")}}}
	}
	cidr := func(cidrs ...string) *networkingv1.ServiceCIDR {
		return &networkingv1.ServiceCIDR{ObjectMeta: om, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	}
	slice := func(driver string, mod func(*resourcev1.ResourceSliceSpec)) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: om, Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: str("n1"),
			Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}}}
		if mod != nil {
			mod(&s.Spec)
		}
		return s
	}
	const st, nd, nw, rs = "storage.k8s.io/v1", "node.k8s.io/v1", "networking.k8s.io/v1", "resource.k8s.io/v1"
	tests := []validateCase{
		{name: "csidriver name", gv: st, res: "csidrivers",
			obj:  obj(&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}),
			want: []string{"metadata.name: Invalid value"}},
		{name: "csidriver attachRequired and modes immutable", gv: st, res: "csidrivers",
			obj: obj(&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: storagev1.CSIDriverSpec{AttachRequired: boolean(false),
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{"Ephemeral"}, PodInfoOnMount: boolean(true)}}),
			old: obj(&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: storagev1.CSIDriverSpec{AttachRequired: boolean(true),
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{"Persistent"}, PodInfoOnMount: boolean(false)}}),
			want: []string{"spec.attachedRequired: Invalid value", "spec.volumeLifecycleModes: Invalid value"}},
		{name: "csinode drivers", gv: st, res: "csinodes",
			obj: obj(&storagev1.CSINode{ObjectMeta: om, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
				{Name: "a.example.com", NodeID: "n"}, {Name: "a.example.com"}}}}),
			want: []string{"spec.drivers[1].name: Duplicate value", "spec.drivers[1].nodeID: Required value"}},
		{name: "csinode allocatable count changes", gv: st, res: "csinodes", obj: obj(csiNode("n", 5)), old: obj(csiNode("n", 3))},
		{name: "csinode node ID immutable", gv: st, res: "csinodes", obj: obj(csiNode("m", 3)), old: obj(csiNode("n", 3)),
			want: []string{"spec.drivers: Invalid value"}},
		{name: "csistoragecapacity", gv: st, res: "csistoragecapacities",
			obj:  obj(&storagev1.CSIStorageCapacity{ObjectMeta: om, StorageClassName: "b", Capacity: apiresource.NewQuantity(-1, apiresource.BinarySI)}),
			old:  obj(&storagev1.CSIStorageCapacity{ObjectMeta: om, StorageClassName: "a"}),
			want: []string{"capacity: Invalid value", "storageClassName: Invalid value"}},
		{name: "volumeattachment without source", gv: st, res: "volumeattachments",
			obj:  obj(&storagev1.VolumeAttachment{ObjectMeta: om, Spec: storagev1.VolumeAttachmentSpec{Attacher: "a"}}),
			want: []string{"spec.source: Required value", "spec.nodeName: Required value"}},
		{name: "volumeattachment spec immutable", gv: st, res: "volumeattachments", obj: obj(va("n2")), old: obj(va("n1")),
			want: []string{"spec: Invalid value"}},
		{name: "volumeattributesclass", gv: st, res: "volumeattributesclasses",
			obj:  obj(&storagev1.VolumeAttributesClass{ObjectMeta: om, DriverName: "b", Parameters: map[string]string{"iops": "2"}}),
			old:  obj(&storagev1.VolumeAttributesClass{ObjectMeta: om, DriverName: "a"}),
			want: []string{"driverName: Forbidden", "parameters: Forbidden"}},
		{name: "runtimeclass handler", gv: nd, res: "runtimeclasses",
			obj: obj(&nodev1.RuntimeClass{ObjectMeta: om, Handler: "run.c"}), want: []string{"handler: Invalid value"}},
		{name: "servicecidr too many", gv: nw, res: "servicecidrs", obj: obj(cidr("10.0.0.0/8", "fd00::/64", "10.1.0.0/16")),
			want: []string{"spec.cidrs: Invalid value"}},
		{name: "servicecidr bad and same family", gv: nw, res: "servicecidrs", obj: obj(cidr("10.0.0.1/8")),
			want: []string{"spec.cidrs[0]: Invalid value"}},
		{name: "servicecidr gains its second family", gv: nw, res: "servicecidrs", obj: obj(cidr("10.0.0.0/8", "fd00::/64")),
			old: obj(cidr("10.0.0.0/8"))},
		{name: "servicecidr second of the same family", gv: nw, res: "servicecidrs", obj: obj(cidr("10.0.0.0/8", "11.0.0.0/8")),
			old: obj(cidr("10.0.0.0/8")), want: []string{"spec.cidrs: Invalid value"}},
		{name: "servicecidr changed", gv: nw, res: "servicecidrs", obj: obj(cidr("11.0.0.0/8")), old: obj(cidr("10.0.0.0/8")),
			want: []string{"spec.cidrs[0]: Invalid value"}},
		{name: "ipaddress parent", gv: nw, res: "ipaddresses",
			obj:  obj(&networkingv1.IPAddress{ObjectMeta: om, Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "Bad_Group"}}}),
			want: []string{"spec.parentRef.group: Invalid value", "spec.parentRef.resource: Required value", "spec.parentRef.name: Required value"}},
		{name: "resourceslice node fields", gv: rs, res: "resourceslices",
			obj:  obj(slice("d.example.com", func(s *resourcev1.ResourceSliceSpec) { s.AllNodes = boolean(true); s.Pool = resourcev1.ResourcePool{} })),
			want: []string{"spec.pool.name: Required value", "spec.pool.resourceSliceCount: Invalid value", "spec: Invalid value"}},
		{name: "resourceslice empty node name", gv: rs, res: "resourceslices",
			obj:  obj(slice("d.example.com", func(s *resourcev1.ResourceSliceSpec) { s.NodeName = str("") })),
			want: []string{"spec.nodeName: Invalid value", "spec: Required value"}},
		{name: "resourceslice driver immutable", gv: rs, res: "resourceslices", obj: obj(slice("e.example.com", nil)),
			old: obj(slice("d.example.com", nil)), want: []string{"spec.driver: Invalid value"}},
		{name: "resourceclaim spec immutable", gv: rs, res: "resourceclaims",
			obj: obj(&resourcev1.ResourceClaim{ObjectMeta: om, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
				Requests: []resourcev1.DeviceRequest{{Name: "r"}}}}}),
			old: obj(&resourcev1.ResourceClaim{ObjectMeta: om}), want: []string{"spec: Invalid value"}},
		{name: "devicetaintrule", gv: rs, res: "devicetaintrules",
			obj: obj(&resourcev1.DeviceTaintRule{ObjectMeta: om, Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Effect: "Evict"}}}),
			// kube's ValidateLabelName gives two causes for an empty key.
			want: []string{"spec.taint.key: Invalid value", "spec.taint.key: Invalid value", "spec.taint.effect: Unsupported value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reg.Lookup(tt.gv, tt.res)
			var old runtime.Object
			if tt.old != nil {
				old = tt.old(t)
			}
			var got []string
			for _, e := range r.Validate(tt.obj(t), old) {
				got = append(got, e.Field+": "+e.Type.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("causes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
