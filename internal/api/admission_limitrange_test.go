package api

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
)

// TestBoundConstraint: a LimitRange item's min and max give kube's
// LimitRanger messages, for containers (requests and limits) and claims
// (requests only).
func TestBoundConstraint(t *testing.T) {
	q := apiresource.MustParse
	list := func(k corev1.ResourceName, v string) corev1.ResourceList {
		if v == "" {
			return nil
		}
		return corev1.ResourceList{k: q(v)}
	}
	const c, pvc = corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim
	for _, tt := range []struct {
		name     string
		isMax    bool
		t        corev1.LimitType
		k        corev1.ResourceName
		bound    string
		req, lim string // "" when not set
		claim    bool   // a claim's max: requests only
		want     string // "" for no error
	}{
		{"min no request", false, c, "cpu", "100m", "", "200m", false, "minimum cpu usage per Container is 100m.  No request is specified"},
		{"min request below", false, c, "cpu", "100m", "50m", "200m", false, "minimum cpu usage per Container is 100m, but request is 50m"},
		{"min limit below", false, c, "cpu", "100m", "200m", "50m", false, "minimum cpu usage per Container is 100m, but limit is 50m"},
		{"min within", false, c, "cpu", "100m", "100m", "", false, ""},
		{"max no limit", true, c, "memory", "500Mi", "100Mi", "", false, "maximum memory usage per Container is 500Mi.  No limit is specified"},
		{"max limit above", true, c, "memory", "500Mi", "100Mi", "1Gi", false, "maximum memory usage per Container is 500Mi, but limit is 1Gi"},
		{"max request above", true, c, "memory", "500Mi", "600Mi", "400Mi", false, "maximum memory usage per Container is 500Mi, but request is 600Mi"},
		{"max within", true, c, "memory", "500Mi", "", "500Mi", false, ""},
		{"claim min below", false, pvc, "storage", "1Gi", "100Mi", "", false, "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi"},
		{"claim max no request", true, pvc, "storage", "2Gi", "", "", true, "maximum storage usage per PersistentVolumeClaim is 2Gi.  No request is specified"},
		{"claim max above", true, pvc, "storage", "2Gi", "3Gi", "", true, "maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 3Gi"},
		{"claim max within", true, pvc, "storage", "2Gi", "2Gi", "", true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, lim := quantities{"request", list(tt.k, tt.req)}, quantities{"limit", list(tt.k, tt.lim)}
			must, other := req, lim
			switch {
			case tt.claim:
				other = quantities{}
			case tt.isMax:
				must, other = lim, req
			}
			err := boundConstraint(tt.isMax, tt.t, tt.k, q(tt.bound), must, other)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("boundConstraint = %q, want %q", got, tt.want)
			}
		})
	}
}
