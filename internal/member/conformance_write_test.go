package member_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Conformance of the write path (issue 3): patches of every type,
// server-side apply, the scale and status subresources, deletion with
// finalizers and propagation policies, graceful pod deletion,
// deletecollection and namespace deletion, replayed against the captures
// and compared with kube's answers, managedFields included.

// withoutManagers is an edit that removes the managedFields entries of
// managers that do not run in these tests (kube-controller-manager), and
// what they wrote: the deployment revision annotation.
func withoutManagers(managers ...string) func(*jv) {
	return func(v *jv) {
		m := v.get("metadata")
		if mf := m.get("managedFields"); mf != nil {
			mf.vals = slices.DeleteFunc(mf.vals, func(e *jv) bool { return slices.Contains(managers, e.get("manager").str()) })
		}
		if a := m.get("annotations"); a != nil {
			a.del("deployment.kubernetes.io/revision")
			if len(a.keys) == 0 {
				m.del("annotations")
			}
		}
	}
}

// controllerFree compares a Deployment written by the captures' clients
// while kube-controller-manager also wrote its status.
var controllerFree = cmpOpts{both: withoutManagers("kube-controller-manager"), drop: []string{"status"}}

func TestConformancePatch(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.setup(t, exchange{golden: "objects/deployment-post.json"})
	// The deployment controller annotates the revision (the json-patch
	// below adds to the annotations it created).
	g.mustDo(t, "PATCH", "/apis/apps/v1/namespaces/golden/deployments/golden-deploy?fieldManager=kube-controller-manager",
		`{"metadata":{"annotations":{"deployment.kubernetes.io/revision":"1"}}}`)

	g.run(t, exchange{golden: "patch/deployment-strategic-merge.json"}, controllerFree)
	g.run(t, exchange{golden: "patch/deployment-merge.json"}, controllerFree)
	g.run(t, exchange{golden: "patch/deployment-json-patch.json"}, controllerFree)
	g.run(t, exchange{golden: "patch/deployment-apply.json"}, controllerFree)
	g.run(t, exchange{golden: "patch/deployment-apply-conflict-409.json"}, cmpOpts{})
	g.run(t, exchange{golden: "patch/deployment-apply-no-fieldmanager.json"}, cmpOpts{})
	g.run(t, exchange{golden: "patch/configmap-apply-create.json"}, cmpOpts{})
	// status.replicas is the deployment controller's.
	scale := cmpOpts{drop: []string{"status.replicas"}}
	g.run(t, exchange{golden: "patch/deployment-scale-get.json"}, scale)
	g.run(t, exchange{golden: "patch/deployment-scale-merge.json"}, scale)
	g.run(t, exchange{golden: "patch/deployment-scale-get-after.json"}, scale)
	g.run(t, exchange{golden: "patch/deployment-get-after-patches.json"}, controllerFree)
	g.run(t, exchange{golden: "patch/deployment-status-get.json"}, controllerFree)
	t.Run("deployment-merge-dryrun", func(t *testing.T) {
		before := g.mustDo(t, "GET", "/apis/apps/v1/namespaces/golden/deployments/golden-deploy", "")
		g.check(t, exchange{golden: "patch/deployment-merge-dryrun.json"}, controllerFree)
		after := g.mustDo(t, "GET", "/apis/apps/v1/namespaces/golden/deployments/golden-deploy", "")
		if string(before) != string(after) {
			t.Errorf("a dry-run patch changed the object:\n%s\n%s", before, after)
		}
	})
	// A repeated apply changes nothing: no write, same resourceVersion.
	t.Run("apply-again-no-op", func(t *testing.T) {
		ex := exchange{golden: "patch/deployment-apply.json"}
		var rvs []string
		for range 2 {
			_, resp, b := g.send(t, ex)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("apply: %s %s", resp.Status, b)
			}
			rvs = append(rvs, metaField(t, b, "resourceVersion"))
		}
		if rvs[0] != rvs[1] {
			t.Errorf("the same apply twice: resourceVersion %s then %s, want no write", rvs[0], rvs[1])
		}
	})
	g.run(t, exchange{golden: "errors/404-patch-missing.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/415-patch-content-type-application-json.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/415-patch-content-type-text-plain.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/422-json-patch-test-failed.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/deployment-delete-foreground.json"}, controllerFree)
	// The garbage collector finishes the foreground deletion: the
	// deployment has no dependents, so it removes the foregroundDeletion
	// finalizer and the deployment goes, as on kube.
	membertest.Eventually(t, 10*time.Second, func() error {
		if code, b := g.do(t, "GET", "/apis/apps/v1/namespaces/golden/deployments/golden-deploy", ""); code != http.StatusNotFound {
			return fmt.Errorf("after a foreground delete: %d %s", code, b)
		}
		return nil
	})
	g.setup(t, exchange{golden: "objects/statefulset-post.json"})
	g.run(t, exchange{golden: "delete/statefulset-delete-orphan.json"}, cmpOpts{both: withoutManagers("kube-controller-manager"),
		drop: []string{"status"}})
}

func TestConformanceDeleteFinalizers(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})

	g.run(t, exchange{golden: "delete/configmap-finalizer-post.json"}, cmpOpts{})
	rv := metaField(t, g.check(t, exchange{golden: "delete/configmap-finalizer-delete.json"}, cmpOpts{}), "resourceVersion")
	g.run(t, exchange{golden: "delete/configmap-finalizer-get-while-terminating.json"}, cmpOpts{})
	t.Run("configmap-finalizer-delete-again", func(t *testing.T) {
		b := g.check(t, exchange{golden: "delete/configmap-finalizer-delete-again.json"}, cmpOpts{})
		if again := metaField(t, b, "resourceVersion"); again != rv {
			t.Errorf("a second DELETE wrote: resourceVersion %s, want %s", again, rv)
		}
	})
	g.run(t, exchange{golden: "delete/configmap-finalizer-remove.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/configmap-finalizer-get-after-remove-404.json"}, cmpOpts{})

	// deletecollection: the captures' curl created the two ConfigMaps.
	for _, i := range []string{"1", "2"} {
		g.mustDo(t, "POST", "/api/v1/namespaces/golden/configmaps?fieldManager=curl",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"golden-dc-`+i+`","labels":{"app":"golden-dc"}},"data":{"i":"`+i+`"}}`)
	}
	g.run(t, exchange{golden: "delete/configmaps-deletecollection.json"}, cmpOpts{})
	if code, b := g.do(t, "GET", "/api/v1/namespaces/golden/configmaps?labelSelector=app%3Dgolden-dc", ""); code != http.StatusOK ||
		len(mustParse(t, "litek8s", b).get("items").vals) != 0 {
		t.Errorf("after deletecollection: %d %s, want no items", code, b)
	}
}

// Graceful deletion of a pod bound to a node: 200 with the pod,
// deletionTimestamp now+30s, grace 30, generation bumped; it stays
// Terminating, even once the grace period ended, until the kubelet's final
// DELETE with gracePeriodSeconds=0 (sent here by hand: there is no
// kubelet).
func TestConformancePodGracefulDelete(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/pod-post.json"})
	g.mustDo(t, "POST", "/api/v1/namespaces/golden/pods/golden-pod/binding",
		`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"golden-pod"},"target":{"kind":"Node","name":"golden-node"}}`)
	drop := []string{"status.conditions"}
	start := time.Now()
	b := g.check(t, exchange{golden: "delete/pod-delete-graceful.json"}, cmpOpts{drop: drop})
	ts, err := time.Parse(time.RFC3339, metaField(t, b, "deletionTimestamp"))
	if d := ts.Sub(start); err != nil || d < 28*time.Second || d > 32*time.Second {
		t.Errorf("deletionTimestamp %v (%v), want about 30 s from now", ts, err)
	}
	// A second DELETE is a no-op that answers the pod.
	code, again := g.do(t, "DELETE", "/api/v1/namespaces/golden/pods/golden-pod", "")
	if code != http.StatusOK || metaField(t, again, "resourceVersion") != metaField(t, b, "resourceVersion") {
		t.Errorf("second DELETE: %d %s", code, again)
	}
	// A shorter grace period (as kubectl --grace-period=1): it ends, and the
	// pod stays Terminating, as in kube.
	g.mustDo(t, "DELETE", "/api/v1/namespaces/golden/pods/golden-pod", `{"gracePeriodSeconds":1}`)
	time.Sleep(2 * time.Second)
	if code, b := g.do(t, "GET", "/api/v1/namespaces/golden/pods/golden-pod", ""); code != http.StatusOK ||
		metaField(t, b, "deletionTimestamp") == "" {
		t.Errorf("after the grace period: %d %s, want the pod still Terminating", code, b)
	}
	// The kubelet's final delete removes it.
	g.mustDo(t, "DELETE", "/api/v1/namespaces/golden/pods/golden-pod", `{"gracePeriodSeconds":0}`)
	if code, _ := g.do(t, "GET", "/api/v1/namespaces/golden/pods/golden-pod", ""); code != http.StatusNotFound {
		t.Errorf("after DELETE gracePeriodSeconds=0: %d, want 404", code)
	}
}

// Namespace deletion: the namespace is marked Terminating (200 with it),
// creates into it are refused with 403, and it disappears once emptied.
func TestConformanceNamespaceDelete(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	// A finalizer holds one object, and so the namespace, until removed.
	g.mustDo(t, "POST", "/api/v1/namespaces/golden/configmaps",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","finalizers":["golden.example.com/hold"]}}`)

	g.run(t, exchange{golden: "delete/namespace-delete.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/namespace-get-terminating.json"}, cmpOpts{})
	t.Run("create-in-terminating-namespace-403", func(t *testing.T) {
		code, b := g.do(t, "POST", "/api/v1/namespaces/golden/configmaps",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}`)
		want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"configmaps \"late\" is forbidden: unable to create new content in namespace golden because it is being terminated",` +
			`"reason":"Forbidden","details":{"name":"late","kind":"configmaps","causes":[{"reason":"NamespaceTerminating",` +
			`"message":"namespace golden is being terminated","field":"metadata.namespace"}]},"code":403}` + "\n"
		if code != http.StatusForbidden || string(b) != want {
			t.Errorf("create in a Terminating namespace: %d %s\nwant %s", code, b, want)
		}
	})
	membertest.Eventually(t, 10*time.Second, func() error { // emptied but for the held object
		code, _ := g.do(t, "GET", "/api/v1/namespaces/golden/configmaps/golden-cm", "")
		if code != http.StatusNotFound {
			return fmt.Errorf("golden-cm still there: %d", code)
		}
		return nil
	})
	if code, b := g.do(t, "GET", "/api/v1/namespaces/golden", ""); code != http.StatusOK {
		t.Fatalf("the namespace went while an object with a finalizer is in it: %d %s", code, b)
	}
	g.mustDo(t, "PATCH", "/api/v1/namespaces/golden/configmaps/held", `{"metadata":{"finalizers":null}}`)
	membertest.Eventually(t, 10*time.Second, func() error {
		if code, _ := g.do(t, "GET", "/api/v1/namespaces/golden", ""); code != http.StatusNotFound {
			return fmt.Errorf("namespace still there: %d", code)
		}
		return nil
	})
	g.run(t, exchange{golden: "delete/namespace-get-after-404.json"}, cmpOpts{})
	t.Run("immortal-namespace", func(t *testing.T) {
		code, b := g.do(t, "DELETE", "/api/v1/namespaces/default", "")
		if code != http.StatusForbidden || !strings.Contains(string(b), `namespaces \"default\" is forbidden: this namespace may not be deleted`) {
			t.Errorf("DELETE default: %d %s", code, b)
		}
	})
}
