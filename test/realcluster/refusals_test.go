package realcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRefusals(t *testing.T) {
	log := strings.Join([]string{
		`E1201 18:50:22.467759   16045 reflector.go:227] "Failed to watch" err="failed to list *v1.PodCertificateRequest: podcertificaterequests.certificates.k8s.io is forbidden: User \"system:anonymous\" cannot list resource"`,
		`I1201 18:50:36.421920   16046 config.go:403] "Starting serviceCIDR config controller"`,
		`E1201 18:51:50.110001   18777 reflector.go:227] "Failed to watch" err="failed to list *v1.CSIDriver: the server could not find the requested resource"`,
		`E1201 18:51:51.110001   18777 reflector.go:227] "Failed to watch" err="failed to list *v1.CSIDriver: the server could not find the requested resource"`,
		`E1201 18:51:52.000000   18777 certificate_manager.go:605] "Failed while requesting a signed certificate from the control plane" err="cannot create certificate signing request: Unauthorized"`,
		`E1201 18:51:53.000000   18777 event.go:365] "Server rejected event (will not retry!)" err="events is forbidden: User" event="&Event{ObjectMeta:{litek8s-realnode.18ed35e9f9947b02`,
		`E1201 18:51:54.000000   18777 event.go:365] "Server rejected event (will not retry!)" err="events is forbidden: User" event="&Event{ObjectMeta:{litek8s-realnode.18ed35e9f99aaaaa`,
		`E1201 18:51:54.500000   18777 event.go:365] "Server rejected event (will not retry!)" err="events \"litek8s-realnode.18ed35e9f9947b02\" is forbidden: User"`,
		`E1201 18:51:54.600000   18777 event.go:365] "Server rejected event (will not retry!)" err="events \"litek8s-realnode.18ed35e9f99aaaab\" is forbidden: User"`,
		`I1201 18:51:55.000000   18777 kubelet_node_status.go:78] "Successfully registered node" node="litek8s-realnode"`,
		`	    cacheUnauthorizedTTL: 30s`,
		`E1201 18:51:56.000000   18777 status_manager.go:1257] "Failed to get status for pod" err="pods \"web-fcb4555c7-pgvck\" is forbidden: User \"system:node:litek8s-realnode\" cannot get resource \"pods\" in API group \"\" in the namespace \"realnode-test\": node: no relationship found between node 'litek8s-realnode' and this object" podUID="x"`,
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "kubelet.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	from := time.Date(time.Now().Year(), 12, 1, 18, 51, 0, 0, time.Local)
	counts, total, err := refusals(path, from)
	if err != nil {
		t.Fatal(err)
	}
	if total != 8 {
		t.Errorf("total = %d, want 8: %v", total, counts)
	}
	if len(counts) != 5 {
		t.Errorf("%d kinds, want 5 (CSIDriver 404, CSR 401, events create and patch 403, node graph lag): %v", len(counts), counts)
	}
	lag := 0
	for m, n := range counts {
		if strings.HasPrefix(m, lagPrefix) {
			lag += n
		}
	}
	if lag != 1 {
		t.Errorf("%d refusals marked %q (its words are past the truncation), want 1: %v", lag, lagPrefix, counts)
	}
	for m, n := range counts {
		if strings.Contains(m, "CSIDriver") && n != 2 {
			t.Errorf("CSIDriver 404 counted %d times, want 2", n)
		}
		if strings.Contains(m, "litek8s-realnode.") && n != 2 {
			t.Errorf("%q counted %d times, want 2 (one kind whatever the event's name)", m, n)
		}
		if strings.Contains(m, "event=") || strings.Contains(m, "E1201") {
			t.Errorf("kind %q keeps the event or the klog header", m)
		}
	}
	// From the zero time every refusal counts; a source line :403 and a
	// setting named cacheUnauthorizedTTL are none.
	if _, total, _ := refusals(path, time.Time{}); total != 9 {
		t.Errorf("from the start: total = %d, want 9", total)
	}
}
