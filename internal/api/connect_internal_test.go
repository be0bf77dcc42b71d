package api

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIsLongRunning(t *testing.T) {
	for path, want := range map[string]bool{
		"/api/v1/namespaces/ns/pods/p/exec":                  true,
		"/api/v1/namespaces/ns/pods/p/attach":                true,
		"/api/v1/namespaces/ns/pods/p/portforward":           true,
		"/api/v1/namespaces/ns/pods/p/log":                   true,
		"/api/v1/namespaces/ns/pods/p:8080/proxy/a/b":        true,
		"/api/v1/namespaces/ns/services/https:web:443/proxy": true,
		"/api/v1/nodes/n1/proxy/stats/summary":               true,
		"/api/v1/namespaces/ns/pods/p":                       false,
		"/api/v1/namespaces/ns/pods/p/status":                false,
		"/api/v1/namespaces/ns/pods/p/eviction":              false,
		"/api/v1/namespaces/ns/configmaps/exec":              false,
		"/api/v1/namespaces/ns/configmaps/c/log":             false,
		"/apis/apps/v1/namespaces/ns/deployments/d/scale":    false,
	} {
		if got := isLongRunning(httptest.NewRequest("GET", path, nil)); got != want {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}

func TestSplitSchemeNamePort(t *testing.T) {
	for id, want := range map[string]string{
		"web":             "http web ",
		"web:8080":        "http web 8080",
		"https:web:8443":  "https web 8443",
		":web:80":         "http web 80",
		"ftp:web:21":      "invalid",
		"a:b:c:d":         "invalid",
		":80":             "invalid",
		"https:web:named": "https web named",
	} {
		scheme, name, port, ok := splitSchemeNamePort(id)
		got := scheme + " " + name + " " + port
		if !ok {
			got = "invalid"
		}
		if got != want {
			t.Errorf("%q: %q, want %q", id, got, want)
		}
	}
}

func TestPodContainer(t *testing.T) {
	pod := func(names ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
		}
		return p
	}
	two := pod("a", "b")
	two.Spec.InitContainers = []corev1.Container{{Name: "init"}}
	two.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "dbg"}}}
	for _, tc := range []struct {
		pod             *corev1.Pod
		container, want string
	}{
		{pod("only"), "", "only"},
		{two, "b", "b"},
		{two, "init", "init"},
		{two, "dbg", "dbg"},
		{two, "", "400 a container name must be specified for pod p, choose one of: [init a b dbg]"},
		{two, "zz", "400 container zz is not valid for pod p"},
		{pod(), "", "400 a container name must be specified for pod p"},
	} {
		got, err := podContainer(tc.pod, tc.container)
		if err != nil {
			got = "400 " + err.Error()
			if !apierrors.IsBadRequest(err) {
				got = err.Error()
			}
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.container, got, tc.want)
		}
	}
}

func TestLogOptions(t *testing.T) {
	for query, want := range map[string]string{
		"container=c&follow=true&tailLines=5&limitBytes=10&timestamps=1": "",
		"sinceSeconds=10":                "",
		"sinceTime=2026-12-01T10:00:00Z": "",
		"tailLines=x":                    "400",
		"sinceTime=yesterday":            "400",
		"tailLines=-1":                   "tailLines: Invalid value: -1: must be greater than or equal to 0",
		"limitBytes=0":                   "limitBytes: Invalid value: 0: must be greater than 0",
		"sinceSeconds=0":                 "sinceSeconds: Invalid value: 0: must be greater than 0",
		"sinceSeconds=5&sinceTime=2026-12-01T10:00:00Z": "at most one of `sinceTime` or `sinceSeconds` may be specified",
		"stream=Stdout": "stream: Forbidden: may not be specified",
	} {
		qv, _ := url.ParseQuery(query)
		o, err := parseLogOptions(qv)
		var got string
		switch {
		case err != nil:
			got = "400"
		case len(validateLogOptions(o)) == 0:
			got = "<nil>"
		default:
			got = validateLogOptions(o).ToAggregate().Error()
		}
		if want == "" && got != "<nil>" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%s: %s, want %q", query, got, want)
		}
	}
}

func TestSubresourceOnly(t *testing.T) {
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "old"}}}}
	sent := old.DeepCopy()
	sent.Labels["a"] = "2"
	sent.Spec.Containers[0].Image = "new"
	sent.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("1")}
	sent.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e"}}}
	sent.Status.Phase = corev1.PodRunning

	ec := subresourceOnly("ephemeralcontainers", old, sent.DeepCopy()).(*corev1.Pod)
	if len(ec.Spec.EphemeralContainers) != 1 || ec.Labels["a"] != "1" || ec.Spec.Containers[0].Image != "old" ||
		ec.Spec.Containers[0].Resources.Requests != nil || ec.Status.Phase != "" {
		t.Errorf("ephemeralcontainers kept %+v", ec)
	}
	rs := subresourceOnly("resize", old, sent.DeepCopy()).(*corev1.Pod)
	if rs.Spec.Containers[0].Resources.Requests == nil || rs.Spec.Containers[0].Image != "old" || rs.Labels["a"] != "1" ||
		rs.Spec.EphemeralContainers != nil {
		t.Errorf("resize kept %+v", rs)
	}
	if got := subresourceOnly("", old, sent); got != sent {
		t.Error("the main resource's write was changed")
	}
}

func TestCheckDisruption(t *testing.T) {
	pdb := func(gen, observed int64, allowed, healthy, desired int32) *policyv1.PodDisruptionBudget {
		p := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: gen}}
		p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: observed, DisruptionsAllowed: allowed,
			CurrentHealthy: healthy, DesiredHealthy: desired}
		return p
	}
	for _, tc := range []struct {
		pdb  *policyv1.PodDisruptionBudget
		want string
	}{
		{pdb(1, 1, 1, 2, 1), ""},
		{pdb(2, 1, 1, 2, 1), "429 The disruption budget b is still being processed by the server."},
		{pdb(1, 1, 0, 1, 1), "429 The disruption budget b needs 1 healthy pods and has 1 currently"},
		{pdb(1, 1, 0, 3, 1), "429 The disruption budget b does not allow evicting pods currently"},
		{pdb(1, 1, -1, 3, 1), "403 The disruption budget b does not allow evicting pods currently: pdb disruptions allowed is negative"},
	} {
		err := checkDisruption(tc.pdb)
		got := ""
		if err != nil {
			got = strings.TrimSpace(codeOf(err) + " " + budgetCause(err))
		}
		if got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.pdb.Status, got, tc.want)
		}
	}
}

// codeOf is the HTTP code of a Status error.
func codeOf(err error) string {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return "?"
	}
	return itoa(int64(se.Status().Code))
}

// budgetCause is the DisruptionTarget cause of a refused eviction.
func budgetCause(err error) string {
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return ""
	}
	for _, c := range se.Status().Details.Causes {
		if c.Type == policyv1.DisruptionBudgetCause {
			return c.Message
		}
	}
	return ""
}
