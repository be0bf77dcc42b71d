package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// protobufClient is a client-go clientset that speaks protobuf only, as
// the kubelet and kube-proxy do (they send protobuf; with an Accept of
// protobuf alone they also read it).
func protobufClient(t *testing.T, s *readServer) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, BearerToken: "t",
		ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf,
			AcceptContentTypes: runtime.ContentTypeProtobuf}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// jsonClient is a client-go clientset that speaks JSON.
func jsonClient(t *testing.T, s *readServer) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, BearerToken: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestNodeKindsServed creates, reads and lists every kind a stock kubelet,
// kube-proxy and DRA drivers use through the real HTTP server, in protobuf
// and in JSON, and checks the defaults kube's scheme gives them.
func TestNodeKindsServed(t *testing.T) {
	s := newReadServer(t, nil)
	for _, c := range []struct {
		name string
		cs   *kubernetes.Clientset
	}{{"protobuf", protobufClient(t, s)}, {"json", jsonClient(t, s)}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cs, name := t.Context(), c.cs, "n-"+c.name
			create := metav1.CreateOptions{}

			node, err := cs.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com", NodeID: name}}}}, create)
			check(t, err)
			got, err := cs.StorageV1().CSINodes().Get(ctx, name, metav1.GetOptions{})
			check(t, err)
			if got.UID != node.UID || len(got.Spec.Drivers) != 1 || got.Spec.Drivers[0].NodeID != name {
				t.Errorf("csinode: got %+v", got)
			}

			drv, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: c.name + ".csi.example.com"}}, create)
			check(t, err)
			if sp := drv.Spec; sp.AttachRequired == nil || !*sp.AttachRequired || sp.PodInfoOnMount == nil || *sp.PodInfoOnMount ||
				sp.FSGroupPolicy == nil || *sp.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy ||
				len(sp.VolumeLifecycleModes) != 1 || sp.VolumeLifecycleModes[0] != storagev1.VolumeLifecyclePersistent ||
				sp.SELinuxMount == nil || sp.RequiresRepublish == nil || sp.StorageCapacity == nil {
				t.Errorf("csidriver defaults: %+v", sp)
			}

			q := resource.MustParse("10Gi")
			_, err = cs.StorageV1().CSIStorageCapacities("read").Create(ctx, &storagev1.CSIStorageCapacity{
				ObjectMeta: metav1.ObjectMeta{Name: name}, StorageClassName: "fast", Capacity: &q}, create)
			check(t, err)

			pv := "pv-" + c.name
			va, err := cs.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: name,
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}, create)
			check(t, err)
			va.Status.Attached = true
			va, err = cs.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{})
			check(t, err)
			if !va.Status.Attached {
				t.Errorf("volumeattachment status not updated: %+v", va.Status)
			}

			_, err = cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: "runc"}, create)
			check(t, err)
			rcs, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
			check(t, err)
			if !hasName(rcs.Items, name, func(r nodev1.RuntimeClass) string { return r.Name }) {
				t.Errorf("runtimeclass %s not listed: %+v", name, rcs.Items)
			}

			cidr := "10.96.0.0/16"
			if c.name == "json" {
				cidr = "10.97.0.0/16"
			}
			_, err = cs.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{cidr}}}, create)
			check(t, err)
			cidrs, err := cs.NetworkingV1().ServiceCIDRs().List(ctx, metav1.ListOptions{})
			check(t, err)
			if !hasName(cidrs.Items, name, func(r networkingv1.ServiceCIDR) string { return r.Name }) {
				t.Errorf("servicecidr %s not listed", name)
			}
			ip := "10.96.0.10"
			if c.name == "json" {
				ip = "2001:db8::a"
			}
			_, err = cs.NetworkingV1().IPAddresses().Create(ctx, &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: ip},
				Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "read", Name: "dns"}}}, create)
			check(t, err)

			cls, err := cs.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}}, create)
			check(t, err)
			if cls.Generation != 1 {
				t.Errorf("deviceclass generation %d, want 1", cls.Generation)
			}
			claim, err := cs.ResourceV1().ResourceClaims("read").Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
					Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: name,
						Tolerations: []resourcev1.DeviceToleration{{Key: "k", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}}}}}}, create)
			check(t, err)
			if e := claim.Spec.Devices.Requests[0].Exactly; e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 ||
				e.Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual {
				t.Errorf("resourceclaim defaults: %+v", e)
			}
			_, err = cs.ResourceV1().ResourceClaimTemplates("read").Create(ctx, &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claim.Spec}}, create)
			check(t, err)
			rule, err := cs.ResourceV1().DeviceTaintRules().Create(ctx, &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}, create)
			check(t, err)
			if rule.Spec.Taint.TimeAdded == nil {
				t.Errorf("devicetaintrule: no timeAdded default")
			}
			slice, err := cs.ResourceV1().ResourceSlices().Create(ctx, resourceSlice(name, name, "gpu.example.com"), create)
			check(t, err)
			if slice.Generation != 1 {
				t.Errorf("resourceslice generation %d, want 1", slice.Generation)
			}
			slices, err := cs.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
			check(t, err)
			if !hasName(slices.Items, name, func(r resourcev1.ResourceSlice) string { return r.Name }) {
				t.Errorf("resourceslice %s not listed", name)
			}
		})
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func hasName[T any](items []T, name string, nameOf func(T) string) bool {
	for _, it := range items {
		if nameOf(it) == name {
			return true
		}
	}
	return false
}

func resourceSlice(name, node, driver string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: &node,
			Pool:    resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "dev0", Taints: []resourcev1.DeviceTaint{{Key: "k", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}}}}
}

// TestResourceSliceDeleteCollection deletes a node's ResourceSlices as the
// kubelet does at start: deletecollection with a spec.nodeName field
// selector (protobuf), then a driver's with spec.driver.
func TestResourceSliceDeleteCollection(t *testing.T) {
	s := newReadServer(t, nil)
	cs := protobufClient(t, s)
	ctx := t.Context()
	rs := cs.ResourceV1().ResourceSlices()
	for _, sl := range []struct{ name, node, driver string }{
		{"n1-a", "n1", "a.example.com"}, {"n1-b", "n1", "b.example.com"},
		{"n2-a", "n2", "a.example.com"}, {"n2-b", "n2", "b.example.com"},
	} {
		_, err := rs.Create(ctx, resourceSlice(sl.name, sl.node, sl.driver), metav1.CreateOptions{})
		check(t, err)
	}
	names := func(opts metav1.ListOptions) string {
		l, err := rs.List(ctx, opts)
		check(t, err)
		var ns []string
		for _, it := range l.Items {
			ns = append(ns, it.Name)
		}
		return strings.Join(ns, ",")
	}
	if got := names(metav1.ListOptions{FieldSelector: "spec.nodeName=n2"}); got != "n2-a,n2-b" {
		t.Errorf("list spec.nodeName=n2: %s", got)
	}
	if got := names(metav1.ListOptions{FieldSelector: "spec.pool.name=n1,spec.driver=b.example.com"}); got != "n1-b" {
		t.Errorf("list pool n1, driver b: %s", got)
	}
	check(t, rs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}))
	if got := names(metav1.ListOptions{}); got != "n2-a,n2-b" {
		t.Errorf("after deleting n1's slices: %s", got)
	}
	check(t, rs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.driver=a.example.com"}))
	if got := names(metav1.ListOptions{}); got != "n2-b" {
		t.Errorf("after deleting driver a's slices: %s", got)
	}

	// A label ResourceSlice's conversion does not know is a 400.
	_, err := rs.List(ctx, metav1.ListOptions{FieldSelector: "spec.allNodes=true"})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(),
		"field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.allNodes") {
		t.Errorf("unknown field label: %v", err)
	}
}

// TestNodeKindsInvalid: bad input is a 422 Status naming the kind and the
// field, and changes nothing.
func TestNodeKindsInvalid(t *testing.T) {
	s := newReadServer(t, nil)
	cs := jsonClient(t, s)
	ctx := t.Context()
	invalid := func(t *testing.T, err error, cause string) {
		t.Helper()
		var se *apierrors.StatusError
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), cause) {
			t.Fatalf("got %v, want a 422 about %q", err, cause)
		}
		if !asStatus(err, &se) || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) == 0 {
			t.Errorf("no causes in %+v", err)
		}
	}

	_, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "rc"}}, metav1.CreateOptions{})
	invalid(t, err, "handler: Required value")
	_, err = cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "rc"}, Handler: "Bad_Handler"}, metav1.CreateOptions{})
	invalid(t, err, "handler: Invalid value")
	rc, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "rc"}, Handler: "runc"}, metav1.CreateOptions{})
	check(t, err)
	rc.Handler = "crun"
	_, err = cs.NodeV1().RuntimeClasses().Update(ctx, rc, metav1.UpdateOptions{})
	invalid(t, err, "handler: Invalid value: \"crun\": field is immutable")

	_, err = cs.ResourceV1().ResourceSlices().Create(ctx, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "d.example.com", Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}}}, metav1.CreateOptions{})
	invalid(t, err, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")
	sl, err := cs.ResourceV1().ResourceSlices().Create(ctx, resourceSlice("s", "n1", "d.example.com"), metav1.CreateOptions{})
	check(t, err)
	n2 := "n2"
	sl.Spec.NodeName = &n2
	_, err = cs.ResourceV1().ResourceSlices().Update(ctx, sl, metav1.UpdateOptions{})
	invalid(t, err, "spec.nodeName: Invalid value")

	_, err = cs.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/16", "10.1.0.0/16"}}}, metav1.CreateOptions{})
	invalid(t, err, "may specify no more than one IP for each IP family")
	_, err = cs.NetworkingV1().IPAddresses().Create(ctx, &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "2001:db8::0a"},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Name: "s"}}}, metav1.CreateOptions{})
	invalid(t, err, "metadata.name: Invalid value")

	pv := "pv"
	va, err := cs.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "n1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}, metav1.CreateOptions{})
	check(t, err)
	va.Spec.NodeName = "n2"
	_, err = cs.StorageV1().VolumeAttachments().Update(ctx, va, metav1.UpdateOptions{})
	invalid(t, err, "spec: Invalid value")
	_, err = cs.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "csi.example.com"}}}}, metav1.CreateOptions{})
	invalid(t, err, "spec.drivers[0].nodeID: Required value")

	// Nothing was stored by the failed writes.
	got, err := cs.NodeV1().RuntimeClasses().Get(ctx, "rc", metav1.GetOptions{})
	check(t, err)
	if got.Handler != "runc" {
		t.Errorf("runtimeclass handler %q after a rejected update", got.Handler)
	}
	if l, err := cs.NetworkingV1().ServiceCIDRs().List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("servicecidrs after a rejected create: %v %+v", err, l)
	}
	if _, err := cs.StorageV1().CSINodes().Get(ctx, "n1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("csinode after a rejected create: %v", err)
	}
}

func asStatus(err error, se **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	*se = s
	return ok
}

// TestNodeKindsTable: kubectl's Table of CSINodes and ResourceSlices
// has kube's columns and cells.
func TestNodeKindsTable(t *testing.T) {
	s := newReadServer(t, nil)
	s.create(t, "/apis/storage.k8s.io/v1/csinodes", `{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"n1"},`+
		`"spec":{"drivers":[{"name":"csi.example.com","nodeID":"n1"}]}}`)
	s.create(t, "/apis/resource.k8s.io/v1/resourceslices", `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s1"},`+
		`"spec":{"driver":"gpu.example.com","nodeName":"n1","pool":{"name":"p1","resourceSliceCount":1}}}`)
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, c := range []struct {
		path    string
		columns []string
		cells   string
	}{
		{"/apis/storage.k8s.io/v1/csinodes", []string{"Name", "Drivers", "Age"}, `["n1",1,`},
		{"/apis/resource.k8s.io/v1/resourceslices", []string{"Name", "Node", "Driver", "Pool", "Age"}, `["s1","n1","gpu.example.com","p1",`},
	} {
		code, _, b := s.do(t, http.MethodGet, c.path, accept, "")
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", c.path, code, b)
		}
		var tbl struct {
			ColumnDefinitions []struct{ Name string } `json:"columnDefinitions"`
			Rows              []struct {
				Cells json.RawMessage `json:"cells"`
			} `json:"rows"`
		}
		check(t, json.Unmarshal(b, &tbl))
		var cols []string
		for _, cd := range tbl.ColumnDefinitions {
			cols = append(cols, cd.Name)
		}
		if strings.Join(cols, ",") != strings.Join(c.columns, ",") || len(tbl.Rows) != 1 ||
			!strings.HasPrefix(string(tbl.Rows[0].Cells), c.cells) {
			t.Errorf("%s: columns %v, rows %s", c.path, cols, b)
		}
	}
	// A protobuf-only GET answers kube's protobuf envelope.
	code, h, b := s.do(t, http.MethodGet, "/apis/storage.k8s.io/v1/csinodes/n1", "application/vnd.kubernetes.protobuf", "")
	if code != http.StatusOK || h.Get("Content-Type") != "application/vnd.kubernetes.protobuf" || !strings.HasPrefix(string(b), "k8s\x00") {
		t.Errorf("protobuf GET: %d %s %q", code, h.Get("Content-Type"), b)
	}
	// The field selector answers a Table too.
	code, _, b = s.do(t, http.MethodGet, "/apis/resource.k8s.io/v1/resourceslices?fieldSelector="+
		url.QueryEscape("spec.nodeName=n2"), accept, "")
	if code != http.StatusOK || strings.Contains(string(b), `"s1"`) {
		t.Errorf("table with a field selector: %d %s", code, b)
	}
}

// TestNodeKindsCreateDropsStatus: as in kube, a create does not set the
// status of the kinds whose status is their controller's.
func TestNodeKindsCreateDropsStatus(t *testing.T) {
	s := newReadServer(t, nil)
	for _, c := range []struct{ path, body, sent string }{
		{"/apis/storage.k8s.io/v1/volumeattachments", `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","metadata":{"name":"va"},` +
			`"spec":{"attacher":"csi.example.com","nodeName":"n1","source":{"persistentVolumeName":"pv"}},"status":{"attached":true}}`,
			`"attached":true`},
		{"/apis/resource.k8s.io/v1/namespaces/read/resourceclaims", `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",` +
			`"metadata":{"name":"c"},"spec":{},"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}}`, "reservedFor"},
		{"/apis/networking.k8s.io/v1/servicecidrs", `{"apiVersion":"networking.k8s.io/v1","kind":"ServiceCIDR","metadata":{"name":"sc"},` +
			`"spec":{"cidrs":["10.96.0.0/12"]},"status":{"conditions":[{"type":"Ready","status":"True","reason":"r","message":"m","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, `"Ready"`},
	} {
		code, _, b := s.do(t, http.MethodPost, c.path, "", c.body)
		if code != http.StatusCreated || strings.Contains(string(b), c.sent) {
			t.Errorf("POST %s: %d %s", c.path, code, b)
		}
	}
}

// TestNodeKindsWatchProtobuf: a protobuf watch of a node's ResourceSlices
// (field selector spec.nodeName, as the kubelet's informers select) sees
// its slices come and go, typed, and not the other nodes'.
func TestNodeKindsWatchProtobuf(t *testing.T) {
	s := newReadServer(t, nil)
	cs := protobufClient(t, s)
	ctx := t.Context()
	rs := cs.ResourceV1().ResourceSlices()
	w, err := rs.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"})
	check(t, err)
	defer w.Stop()
	for _, sl := range []struct{ name, node string }{{"n2-a", "n2"}, {"n1-a", "n1"}} {
		_, err := rs.Create(ctx, resourceSlice(sl.name, sl.node, "a.example.com"), metav1.CreateOptions{})
		check(t, err)
	}
	check(t, rs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}))
	for _, want := range []string{"ADDED", "DELETED"} {
		select {
		case ev := <-w.ResultChan():
			sl, ok := ev.Object.(*resourcev1.ResourceSlice)
			if string(ev.Type) != want || !ok || sl.Name != "n1-a" || *sl.Spec.NodeName != "n1" {
				t.Fatalf("event %s %T %+v, want %s of n1-a", ev.Type, ev.Object, ev.Object, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s event", want)
		}
	}
}
