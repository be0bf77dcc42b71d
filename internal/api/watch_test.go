package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/framer"

	"github.com/litek8s/litek8s/internal/api"
)

const bookmarkEvery = 150 * time.Millisecond

func fastBookmarks(c *api.Config) { c.BookmarkInterval = bookmarkEvery }

// A watch that allows bookmarks gets one every BookmarkInterval: only kind,
// apiVersion and metadata.resourceVersion, the revision this member has
// applied, which moves on with writes the watch does not see.
func TestWatchBookmarks(t *testing.T) {
	s := newReadServer(t, fastBookmarks)
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("a"))
	w := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion="+rv, "")
	first := w.nextOf("BOOKMARK")
	want := fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"%d"}}`, rvOf(t, first.Object))
	if string(first.Object) != want {
		t.Errorf("bookmark object %s, want %s", first.Object, want)
	}
	if rvOf(t, first.Object) < mustUint(t, rv) {
		t.Errorf("bookmark at %d, before the watch's start %s", rvOf(t, first.Object), rv)
	}
	// A write in another namespace: no event here, but the next bookmark
	// is at or after it.
	other := mustUint(t, s.create(t, "/api/v1/namespaces/other/configmaps", configMapBody("b")))
	deadline := time.Now().Add(5 * time.Second)
	for {
		ev := w.next()
		if ev.Type != "BOOKMARK" {
			t.Fatalf("unexpected %s event %s", ev.Type, ev.Object)
		}
		if rvOf(t, ev.Object) >= other {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bookmarks stay before revision %d", other)
		}
	}
	// An event in the watch comes before any bookmark that covers it.
	mine := mustUint(t, s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("c")))
	for {
		ev := w.next()
		if ev.Type == "ADDED" {
			if rvOf(t, ev.Object) != mine {
				t.Fatalf("ADDED at %d, want %d", rvOf(t, ev.Object), mine)
			}
			break
		}
		if rvOf(t, ev.Object) >= mine {
			t.Fatalf("bookmark at %d before the ADDED at %d", rvOf(t, ev.Object), mine)
		}
	}
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	var n uint64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Without allowWatchBookmarks there are none.
func TestWatchNoBookmarksUnlessAllowed(t *testing.T) {
	s := newReadServer(t, fastBookmarks)
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("a"))
	w := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1&timeoutSeconds=1&resourceVersion="+rv, "")
	rest, err := io.ReadAll(w.r)
	if err != nil || len(rest) != 0 {
		t.Errorf("watch without allowWatchBookmarks sent %q (%v)", rest, err)
	}
}

// Like kube's watch cache, a bookmark goes out 2 s before the watch's
// timeout when that comes before the next periodic one.
func TestWatchBookmarkBeforeTimeout(t *testing.T) {
	s := newReadServer(t, nil) // one minute between periodic bookmarks
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("a"))
	start := time.Now()
	w := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion="+rv, "")
	ev := w.next()
	if ev.Type != "BOOKMARK" {
		t.Fatalf("%s event, want BOOKMARK", ev.Type)
	}
	if d := time.Since(start); d < 500*time.Millisecond || d > 2500*time.Millisecond {
		t.Errorf("bookmark after %v, want about 1 s (2 s before the 3 s timeout)", d)
	}
	if rest, _ := io.ReadAll(w.r); len(rest) != 0 {
		t.Errorf("after the bookmark: %q", rest)
	}
}

// Bookmarks have the shape of the kind's empty object, as kube encodes it
// (a Pod's carries spec.containers null and an empty status), and of the
// watch's events: a one-row Table in a Table watch, a
// PartialObjectMetadata in a metadata watch.
func TestWatchBookmarkShapes(t *testing.T) {
	s := newReadServer(t, fastBookmarks)
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("a"))
	pods := s.watch(t, "/api/v1/namespaces/read/pods?watch=1&allowWatchBookmarks=true&resourceVersion="+rv, "")
	bm := pods.nextOf("BOOKMARK")
	if want := fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"%d"},"spec":{"containers":null},"status":{}}`,
		rvOf(t, bm.Object)); string(bm.Object) != want {
		t.Errorf("pod bookmark %s, want %s", bm.Object, want)
	}

	table := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion="+rv,
		"application/json;as=Table;v=v1;g=meta.k8s.io")
	var tb metav1.Table
	if err := json.Unmarshal(table.nextOf("BOOKMARK").Object, &tb); err != nil {
		t.Fatal(err)
	}
	if tb.Kind != "Table" || len(tb.ColumnDefinitions) == 0 || len(tb.Rows) != 1 {
		t.Fatalf("Table bookmark %+v", tb)
	}
	var row metav1.PartialObjectMetadata
	if err := json.Unmarshal(tb.Rows[0].Object.Raw, &row); err != nil || row.Kind != "PartialObjectMetadata" ||
		row.ResourceVersion != tb.ResourceVersion {
		t.Errorf("Table bookmark row object %s (%v), Table at %s", tb.Rows[0].Object.Raw, err, tb.ResourceVersion)
	}
	if got := fmt.Sprint(tb.Rows[0].Cells); got != "[ 0 <unknown>]" {
		t.Errorf("Table bookmark cells %s, want the empty object's [ 0 <unknown>]", got)
	}

	partial := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion="+rv,
		"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
	bm = partial.nextOf("BOOKMARK")
	if want := fmt.Sprintf(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"%d"}}`,
		rvOf(t, bm.Object)); string(bm.Object) != want {
		t.Errorf("metadata bookmark %s, want %s", bm.Object, want)
	}
}

// A watch-list ends its initial events with the annotated bookmark, in the
// watch's shape too.
func TestWatchListInitialEventsEnd(t *testing.T) {
	s := newReadServer(t, nil)
	s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("a"))
	const q = "/api/v1/namespaces/read/configmaps?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
	w := s.watch(t, q, "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
	if ev := w.next(); ev.Type != "ADDED" || !strings.HasPrefix(string(ev.Object), `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a"`) {
		t.Fatalf("first event %s %s", ev.Type, ev.Object)
	}
	bm := w.next()
	var pom metav1.PartialObjectMetadata
	if err := json.Unmarshal(bm.Object, &pom); err != nil || bm.Type != "BOOKMARK" ||
		pom.Annotations["k8s.io/initial-events-end"] != "true" {
		t.Fatalf("second event %s %s", bm.Type, bm.Object)
	}
	// Table watch with includeObject=None: the bookmark row keeps its
	// metadata, so that the annotation is visible.
	tw := s.watch(t, q+"&includeObject=None", "application/json;as=Table;v=v1;g=meta.k8s.io")
	tw.next()
	var tb metav1.Table
	if err := json.Unmarshal(tw.nextOf("BOOKMARK").Object, &tb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(tb.Rows[0].Object.Raw, []byte(`"k8s.io/initial-events-end":"true"`)) {
		t.Errorf("Table bookmark row %s", tb.Rows[0].Object.Raw)
	}
	// sendInitialEvents without allowWatchBookmarks: the objects, no
	// bookmark (kube accepts it).
	plain := s.watch(t, strings.Replace(q, "allowWatchBookmarks=true", "timeoutSeconds=1", 1), "")
	if ev := plain.next(); ev.Type != "ADDED" {
		t.Fatalf("event %s", ev.Type)
	}
	if rest, _ := io.ReadAll(plain.r); len(rest) != 0 {
		t.Errorf("after the initial events: %q", rest)
	}
}

// Watch parameters are validated as kube validates them for watches.
func TestWatchParamsInvalid(t *testing.T) {
	s := newReadServer(t, nil)
	for _, c := range []struct{ query, msg string }{
		{"sendInitialEvents=true&allowWatchBookmarks=true",
			`resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`},
		{"resourceVersionMatch=NotOlderThan&resourceVersion=1",
			`resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`},
		{"sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1", `Unsupported value: \"Exact\"`},
	} {
		code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps?watch=1&"+c.query, "", "")
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(b), c.msg) {
			t.Errorf("%s: %d %s, want 422 with %q", c.query, code, b, c.msg)
		}
	}
	code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps?watch=1", "application/yaml", "")
	if code != http.StatusNotAcceptable {
		t.Errorf("YAML watch: %d %s, want 406", code, b)
	}
}

// A protobuf-only watch gets length-delimited metav1.WatchEvent frames
// whose objects are enveloped protobuf, with the stream media type, as
// client-go's protobuf watch decoder reads them.
func TestWatchProtobuf(t *testing.T) {
	s := newReadServer(t, fastBookmarks)
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("a"))
	w := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=0",
		"application/vnd.kubernetes.protobuf")
	if ct := w.resp.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Errorf("Content-Type %q", ct)
	}
	scheme := runtime.NewScheme()
	corev1.AddToScheme(scheme)
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	ser := protobuf.NewSerializer(scheme, scheme)
	dec := streaming.NewDecoder(framer.NewLengthDelimitedFrameReader(io.NopCloser(w.r)), protobuf.NewRawSerializer(scheme, scheme))
	next := func() (string, runtime.Object) {
		var ev metav1.WatchEvent
		if _, _, err := dec.Decode(nil, &ev); err != nil {
			t.Fatalf("watch frame: %v", err)
		}
		obj, _, err := ser.Decode(ev.Object.Raw, nil, nil)
		if err != nil {
			t.Fatalf("watch event object: %v", err)
		}
		return ev.Type, obj
	}
	typ, obj := next()
	cm, ok := obj.(*corev1.ConfigMap)
	if typ != "ADDED" || !ok || cm.Name != "a" || cm.ResourceVersion != rv || cm.Data["k"] != "v" {
		t.Fatalf("first event %s %#v", typ, obj)
	}
	s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("b"))
	for {
		typ, obj = next()
		if typ == "ADDED" {
			if cm := obj.(*corev1.ConfigMap); cm.Name != "b" {
				t.Errorf("second ADDED is %s", cm.Name)
			}
			continue
		}
		if typ != "BOOKMARK" {
			t.Fatalf("event %s", typ)
		}
		if cm := obj.(*corev1.ConfigMap); cm.ResourceVersion == "" || cm.Name != "" {
			t.Errorf("bookmark %#v", cm)
		}
		break
	}
}

// A Table watch renders each event's ages at the time of the event: an
// object created ten minutes into the watch is 0s old, not "<invalid>"
// (an age measured from the watch's start).
func TestWatchTableAgeAtEvent(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newReadServer(t, func(c *api.Config) { c.Now = clock })
	rv := s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("before"))
	w := s.watch(t, "/api/v1/namespaces/read/configmaps?watch=1&resourceVersion="+rv,
		"application/json;as=Table;v=v1;g=meta.k8s.io")
	mu.Lock()
	now = now.Add(10 * time.Minute)
	mu.Unlock()
	s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("later"))
	var tb metav1.Table
	if err := json.Unmarshal(w.nextOf("ADDED").Object, &tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != 1 || fmt.Sprint(tb.Rows[0].Cells) != "[later 1 0s]" {
		t.Errorf("row %+v, want [later 1 0s]", tb.Rows)
	}
}
