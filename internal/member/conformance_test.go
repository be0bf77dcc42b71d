package member_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Conformance: litek8s's answers to the requests of the kube-apiserver 1.37
// captures (testdata/golden/kube-1.37), compared with kube's answers field
// by field and in key order, after normalizing what differs on every run
// (uid, resourceVersion, timestamps, clusterIP, Table ages). Each
// top-level test runs one member; its subtests replay captures in the order
// in which they were made, on objects created from the same request bodies.

// goldenCMUID is golden-cm's uid in the captures; request bodies that carry
// it get ours instead.
const goldenCMUID = "ccbf0abb-dd04-4834-828b-5613702f3470"

func (g *goldenClient) run(t *testing.T, ex exchange, opt cmpOpts) {
	t.Helper()
	t.Run(strings.TrimSuffix(path.Base(ex.golden), path.Ext(ex.golden)), func(t *testing.T) {
		g.check(t, ex, opt)
	})
}

// do sends a JSON request that is no capture (fixtures, watch mutations).
func (g *goldenClient) do(t *testing.T, method, target, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, g.base+target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "golden-curl/1.0")
	switch {
	case method == http.MethodPatch:
		req.Header.Set("Content-Type", "application/merge-patch+json")
	case body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func (g *goldenClient) mustDo(t *testing.T, method, target, body string) []byte {
	t.Helper()
	code, b := g.do(t, method, target, body)
	if code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, target, code, b)
	}
	return b
}

// waitRootCA waits for the kube-root-ca.crt of the namespace golden: the
// golden lists and Tables hold it because kube-controller-manager's root
// CA publisher puts it in every namespace, and litek8s's does the same
// (its ca.crt is this cluster's CA: the normalizer hides the PEM).
func (g *goldenClient) waitRootCA(t *testing.T) {
	t.Helper()
	membertest.Eventually(t, 10*time.Second, func() error {
		if code, b := g.do(t, "GET", "/api/v1/namespaces/golden/configmaps/kube-root-ca.crt", ""); code != http.StatusOK {
			return fmt.Errorf("kube-root-ca.crt: %d %s", code, b)
		}
		return nil
	})
}

func metaField(t *testing.T, body []byte, key string) string {
	t.Helper()
	return mustParse(t, "litek8s", body).at("metadata", key).str()
}

func mustRV(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}

// rewrite returns a request-body edit that replaces old/new pairs.
func rewrite(pairs ...string) func([]byte) []byte {
	return func(b []byte) []byte { return []byte(strings.NewReplacer(pairs...).Replace(string(b))) }
}

func TestConformanceObjects(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.run(t, exchange{golden: "objects/namespace-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/configmap-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/configmap-get.json"}, cmpOpts{})
	g.waitRootCA(t)
	g.run(t, exchange{golden: "objects/configmap-table.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/secret-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/service-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/deployment-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/pod-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/lease-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/serviceaccount-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/event-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "objects/node-post.json"}, cmpOpts{})
}

func TestConformanceLists(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.waitRootCA(t)
	g.run(t, exchange{golden: "lists/configmap-2-post.json"}, cmpOpts{})
	g.run(t, exchange{golden: "lists/configmaps-list.json"}, cmpOpts{})
	t.Run("configmaps-list-limit2", func(t *testing.T) {
		page1 := g.check(t, exchange{golden: "lists/configmaps-list-limit2.json"}, cmpOpts{})
		cont := metaField(t, page1, "continue")
		page2 := g.check(t, exchange{golden: "lists/configmaps-list-limit2-page2.json",
			target: "/api/v1/namespaces/golden/configmaps?limit=2&continue=" + cont}, cmpOpts{})
		if p1, p2 := metaField(t, page1, "resourceVersion"), metaField(t, page2, "resourceVersion"); p1 != p2 {
			t.Errorf("page 2 reports resourceVersion %s, want the first page's %s", p2, p1)
		}
	})
	g.run(t, exchange{golden: "lists/configmaps-list-labelselector.json"}, cmpOpts{})
	g.run(t, exchange{golden: "lists/configmaps-list-fieldselector.json"}, cmpOpts{})
	g.run(t, exchange{golden: "lists/configmaps-list-allnamespaces-labelselector.json"}, cmpOpts{})
	t.Run("resourceVersionMatch", func(t *testing.T) {
		cur := metaField(t, g.check(t, exchange{golden: "lists/configmaps-list.json"}, cmpOpts{}), "resourceVersion")
		// Exact at the current revision: served, reporting that revision.
		exact := g.check(t, exchange{golden: "lists/configmaps-list-rv-exact.json",
			target: "/api/v1/namespaces/golden/configmaps?resourceVersion=" + cur + "&resourceVersionMatch=Exact"}, cmpOpts{})
		if got := metaField(t, exact, "resourceVersion"); got != cur {
			t.Errorf("Exact list reports resourceVersion %s, want %s", got, cur)
		}
		// Exact at a revision before later changes: 410 Expired.
		g.run(t, exchange{golden: "watch/configmaps-list-rv1-exact-too-old.json"}, cmpOpts{})
		// NotOlderThan an old revision: the current state.
		g.run(t, exchange{golden: "watch/configmaps-list-rv1-notolderthan.json"}, cmpOpts{})
	})
}

func TestConformanceTables(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.waitRootCA(t)
	g.run(t, exchange{golden: "tables/configmaps-table-v1beta1-only.json"}, cmpOpts{})

	// The golden pod was bound by the scheduler before these captures;
	// litek8s has none yet, so the test binds it as the scheduler does.
	g.setup(t, exchange{golden: "objects/pod-post.json"})
	g.mustDo(t, "POST", "/api/v1/namespaces/golden/pods/golden-pod/binding",
		`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"golden-pod"},"target":{"kind":"Node","name":"golden-node"}}`)
	g.run(t, exchange{golden: "tables/pods-table-includeObject-None.json"}, cmpOpts{golden: keepRows("golden-pod")})
	drop := []string{"rows.*.object.status.conditions"} // the scheduler's PodScheduled condition
	g.run(t, exchange{golden: "tables/pods-table-includeObject-Object.json"}, cmpOpts{golden: keepRows("golden-pod"), drop: drop})
	g.run(t, exchange{golden: "tables/pod-single-table.json"}, cmpOpts{})
}

// watchStream is an open watch whose lines are read one at a time.
type watchStream struct {
	t     *testing.T
	r     *bufio.Reader
	lines [][]byte // read so far
}

// watch opens the capture's watch and checks the response head.
func (g *goldenClient) watch(t *testing.T, ex exchange) *watchStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	m, resp := g.open(ctx, t, ex)
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	checkHead(t, m, resp)
	return &watchStream{t: t, r: bufio.NewReader(resp.Body)}
}

// next reads n more lines.
func (w *watchStream) next(n int) {
	w.t.Helper()
	for range n {
		l, err := w.r.ReadBytes('\n')
		if err != nil {
			w.t.Fatalf("watch: after %d lines: %v (%q)", len(w.lines), err, l)
		}
		w.lines = append(w.lines, l)
	}
}

// compare compares the lines read with the capture's, line by line (Table
// Age columns carry over from the first event).
func (w *watchStream) compare(golden string, opt cmpOpts) {
	w.t.Helper()
	want := readLines(w.t, readGolden(w.t, golden))
	if len(want) != len(w.lines) {
		w.t.Fatalf("%d lines read, the capture has %d", len(w.lines), len(want))
	}
	wn, gn := newNormalizer(), newNormalizer()
	for i := range want {
		wv, gv := mustParse(w.t, "golden", want[i]), mustParse(w.t, "litek8s", w.lines[i])
		if string(w.lines[i]) != gv.compact()+"\n" {
			w.t.Errorf("line %d is not compact JSON ending with one newline: %q", i+1, tail(w.lines[i]))
		}
		if d := diffTrees(wv, gv, opt, wn, gn); d != "" {
			w.t.Errorf("event %d differs from kube's (normalized; first difference at line %s)", i+1, d)
		}
	}
}

// eventRV is the resourceVersion of line i's object (for Tables, of the Table).
func (w *watchStream) eventRV(i int) uint64 {
	w.t.Helper()
	return mustRV(w.t, mustParse(w.t, "litek8s", w.lines[i]).at("object", "metadata", "resourceVersion").str())
}

// mutate creates, patches and deletes ConfigMap name, as the captures' curl
// did while the watches ran (manager "curl" in managedFields).
func (g *goldenClient) mutate(t *testing.T, name string) {
	t.Helper()
	const cms = "/api/v1/namespaces/golden/configmaps"
	g.mustDo(t, "POST", cms+"?fieldManager=curl", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+
		`","labels":{"app":"golden-watch"}},"data":{"step":"1"}}`)
	g.mustDo(t, "PATCH", cms+"/"+name+"?fieldManager=curl", `{"data":{"step":"2"}}`)
	g.mustDo(t, "DELETE", cms+"/"+name, "")
}

func TestConformanceWatch(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.setup(t, exchange{golden: "lists/configmap-2-post.json"})
	g.waitRootCA(t)
	listRV := func(t *testing.T) string {
		return metaField(t, g.mustDo(t, "GET", "/api/v1/namespaces/golden/configmaps", ""), "resourceVersion")
	}

	t.Run("configmaps-watch", func(t *testing.T) {
		w := g.watch(t, exchange{golden: "watch/configmaps-watch.jsonl",
			target: "/api/v1/namespaces/golden/configmaps?watch=1&resourceVersion=" + listRV(t)})
		g.mutate(t, "golden-watch-1")
		w.next(3)
		w.compare("watch/configmaps-watch.jsonl", cmpOpts{})
		if mod, del := w.eventRV(1), w.eventRV(2); del <= mod {
			t.Errorf("DELETED carries resourceVersion %d, want the delete's (after MODIFIED's %d)", del, mod)
		}
	})
	t.Run("configmaps-watch-table", func(t *testing.T) {
		w := g.watch(t, exchange{golden: "watch/configmaps-watch-table.jsonl",
			target: "/api/v1/namespaces/golden/configmaps?watch=1&resourceVersion=" + listRV(t)})
		g.mutate(t, "golden-watch-3")
		w.next(3)
		w.compare("watch/configmaps-watch-table.jsonl", cmpOpts{})
		for i, l := range w.lines { // each Table reports its row's resourceVersion
			table := mustParse(t, "litek8s", l).get("object")
			row := table.get("rows").vals[0]
			if tr, or := table.at("metadata", "resourceVersion").str(), row.at("object", "metadata", "resourceVersion").str(); tr != or {
				t.Errorf("event %d: Table resourceVersion %s, its row's %s", i+1, tr, or)
			}
		}
	})
	t.Run("configmaps-watchlist", func(t *testing.T) {
		w := g.watch(t, exchange{golden: "watch/configmaps-watchlist.jsonl"})
		w.next(4) // three synthetic ADDED, then the initial-events-end bookmark
		g.mutate(t, "golden-watch-2")
		w.next(3)
		w.compare("watch/configmaps-watchlist.jsonl", cmpOpts{})
		bookmark := w.eventRV(3)
		for i := range 3 {
			if w.eventRV(i) > bookmark {
				t.Errorf("initial event %d has resourceVersion %d, after the bookmark's %d", i, w.eventRV(i), bookmark)
			}
		}
		if w.eventRV(4) <= bookmark {
			t.Errorf("the first live event has resourceVersion %d, not after the bookmark's %d", w.eventRV(4), bookmark)
		}
	})
}

// A watch from a resourceVersion older than the change feed's window gets
// 200 and one ERROR event with a 410 Expired Status, then the stream ends.
func TestConformanceWatchTooOld(t *testing.T) {
	const feed = 16
	g := newGoldenClient(t, func(c *member.Config) { c.Store.FeedSize = feed })
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	for i := range feed + 4 { // evict resourceVersion 1 and more from the feed
		g.mustDo(t, "POST", "/api/v1/namespaces/golden/configmaps",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"evict-`+strconv.Itoa(i)+`"}}`)
	}
	w := g.watch(t, exchange{golden: "watch/configmaps-watch-rv1-too-old.jsonl"})
	w.next(1)
	if rest, err := io.ReadAll(w.r); err != nil || len(rest) > 0 {
		t.Errorf("after the ERROR event: %q, %v; want the server to end the stream", rest, err)
	}
	// kube's message ends with the oldest resourceVersion it still has,
	// "(53975)": compared separately below.
	msg := regexp.MustCompile(`^too old resource version: 1 \(\d+\)$`)
	got := mustParse(t, "litek8s", w.lines[0]).at("object", "message").str()
	w.compare("watch/configmaps-watch-rv1-too-old.jsonl", cmpOpts{drop: []string{"object.message"}})
	if !msg.MatchString(got) {
		t.Errorf("message %q does not match kube's %v", got, msg)
	}
}

func TestConformanceErrors(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	uid := metaField(t, g.setup(t, exchange{golden: "objects/configmap-post.json"}), "uid")
	ourUID := rewrite(goldenCMUID, uid)

	g.run(t, exchange{golden: "errors/404-get-missing-configmap.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/404-get-missing-deployment.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/404-unknown-resource.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/404-post-missing-namespace.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/409-post-already-exists.json"}, cmpOpts{})
	// The captures' plain curl bumped golden-cm before these PUTs (its
	// managedFields entry "curl" is in their bodies).
	g.mustDo(t, "PATCH", "/api/v1/namespaces/golden/configmaps/golden-cm?fieldManager=curl", `{"data":{"bumped":"1"}}`)
	g.run(t, exchange{golden: "errors/409-put-stale-rv.json",
		body: rewrite(goldenCMUID, uid, `"resourceVersion":"105660"`, `"resourceVersion":"1"`)}, cmpOpts{})
	g.run(t, exchange{golden: "errors/200-put-no-rv.json", body: ourUID}, cmpOpts{})
	g.run(t, exchange{golden: "errors/400-post-namespace-mismatch.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/400-put-name-mismatch.json", body: ourUID}, cmpOpts{})
	g.run(t, exchange{golden: "errors/405-post-to-object-path.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/406-accept-xml.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/415-post-content-type-text-plain.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/400-strict-unknown-field.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/201-warn-unknown-field.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/401-bad-token.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/422-post-invalid-name.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/400-malformed-json.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/400-invalid-label-selector.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/400-post-wrong-kind.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/409-delete-precondition-uid.json"}, cmpOpts{})
	g.run(t, exchange{golden: "errors/422-list-with-sendInitialEvents.json"}, cmpOpts{})
	t.Run("201-dryrun-create", func(t *testing.T) {
		body := g.check(t, exchange{golden: "errors/201-dryrun-create.json"}, cmpOpts{})
		if metaField(t, body, "resourceVersion") != "" {
			t.Errorf("a dry-run create answered a resourceVersion: %s", body)
		}
		if code, b := g.do(t, "GET", "/api/v1/namespaces/golden/configmaps/golden-dryrun", ""); code != http.StatusNotFound {
			t.Errorf("GET after a dry-run create: %d %s, want 404", code, b)
		}
	})
}

func TestConformanceDelete(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.setup(t, exchange{golden: "objects/configmap-post.json"})
	g.setup(t, exchange{golden: "lists/configmap-2-post.json"})
	g.setup(t, exchange{golden: "errors/201-warn-unknown-field.json"}) // golden-strict

	g.run(t, exchange{golden: "delete/configmap-delete.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/configmap-delete-again-404.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/configmap-delete-dryrun-nobody.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/configmap-get-after-dryrun-delete.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/configmap-delete-dryrun-in-body.json"}, cmpOpts{})
	g.run(t, exchange{golden: "delete/configmap-get-after-dryrun-in-body-delete.json"}, cmpOpts{})
	t.Run("configmap-delete-dryrun-query-ignored-with-body", func(t *testing.T) {
		g.check(t, exchange{golden: "delete/configmap-delete-dryrun-query-ignored-with-body.json"}, cmpOpts{})
		if code, b := g.do(t, "GET", "/api/v1/namespaces/golden/configmaps/golden-cm", ""); code != http.StatusNotFound {
			t.Errorf("GET after a delete whose body overrode ?dryRun=All: %d %s, want 404", code, b)
		}
	})
}

func TestConformanceMisc(t *testing.T) {
	g := newGoldenClient(t, nil)
	g.run(t, exchange{golden: "misc/healthz.txt"}, cmpOpts{})
	g.run(t, exchange{golden: "misc/readyz.txt"}, cmpOpts{})
	g.setup(t, exchange{golden: "objects/namespace-post.json"})
	g.mustDo(t, "POST", "/api/v1/namespaces/golden/configmaps?fieldManager=curl",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"golden-immutable"},"immutable":true,"data":{"k":"v"}}`)
	g.run(t, exchange{golden: "misc/configmap-get-accept-any.json"}, cmpOpts{})

	// /version: same head, same keys in the same order, indented without a
	// trailing newline; the build values are litek8s's own.
	t.Run("version", func(t *testing.T) {
		ex := exchange{golden: "discovery/version.json"}
		m, resp, body := g.send(t, ex)
		checkHead(t, m, resp)
		want := readGolden(t, ex.golden)
		wv, gv := mustParse(t, "golden", want), mustParse(t, "litek8s", body)
		if string(body) != gv.indent() {
			t.Errorf("body is not indented JSON without a trailing newline: %q", tail(body))
		}
		if strings.Join(wv.keys, ",") != strings.Join(gv.keys, ",") {
			t.Errorf("keys %v, want %v", gv.keys, wv.keys)
		}
		for _, k := range []string{"major", "minor", "emulationMajor", "emulationMinor", "minCompatibilityMajor",
			"minCompatibilityMinor", "gitTreeState"} {
			if g, w := gv.get(k).str(), wv.get(k).str(); g != w {
				t.Errorf("%s = %q, want %q", k, g, w)
			}
		}
		if !strings.HasPrefix(gv.get("gitVersion").str(), "v1.37.") {
			t.Errorf("gitVersion %q does not claim 1.37", gv.get("gitVersion").str())
		}
	})
}
