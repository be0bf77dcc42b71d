package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// metrics are the API's collectors, under kube-apiserver's names and label
// values (docs/metrics.md): one set per Server, in the member's registry.
// A nil *metrics (Config.Metrics unset) counts nothing.
//
// Every request the API serves itself passes instrument (inside the token
// check, like kube's, so 401s are not counted); /metrics, /internal/ and
// /admin/ are not API requests and are not counted. Resource requests get
// their labels from the routing (serveResource calls observe); health
// probes, /version, discovery and OpenAPI are counted as kube counts its
// non-resource paths: verb GET, the path class in subresource ("/readyz",
// "/apis", "/openapi/v3"), every other label empty.
//
// The hot path allocates nothing beyond the request's recorder: the
// labelled children of a route (resource, verb, subresource, scope) are
// looked up once and cached under a key of a pointer and small strings
// that are constants, never built per request.
type metrics struct {
	requests    *prometheus.CounterVec   // verb, group, version, resource, subresource, scope, code
	durations   *prometheus.HistogramVec // verb, group, version, resource, subresource, scope
	inflight    [2]prometheus.Gauge      // by requestKind
	longrunning *prometheus.GaugeVec     // verb, group, version, resource, scope
	watchEvents *prometheus.CounterVec   // group, version, resource
	forwarded   *prometheus.CounterVec   // code
	// refused are the requests answered 429, by reason: the in-flight
	// limits by requestClass (refused before they are served, so not in
	// apiserver_request_total), then evictions a disruption budget held
	// back (in apiserver_request_total too, code 429).
	refused [refusedReasons]prometheus.Counter

	mu     sync.Mutex                          // serialises writers of routes
	routes atomic.Pointer[map[routeKey]*route] // copied on write, read without a lock
}

// requestKind is apiserver_current_inflight_requests' request_kind.
type requestKind uint8

const (
	readOnly requestKind = iota
	mutating
)

// latencyBuckets are the request latency buckets of docs/metrics.md: a
// member answers in well under a millisecond to tens of ms; anything above
// 1 s is an incident.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	inflight := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_current_inflight_requests",
		Help: "Requests being served by request kind (mutating or readOnly); watches are not counted."}, []string{"request_kind"})
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_request_total",
			Help: "Requests answered by verb, group, version, resource, subresource, scope and HTTP code."},
			[]string{"verb", "group", "version", "resource", "subresource", "scope", "code"}),
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_duration_seconds",
			Help:    "Time to answer a request (a watch: until its response header) by verb, group, version, resource, subresource and scope.",
			Buckets: latencyBuckets}, []string{"verb", "group", "version", "resource", "subresource", "scope"}),
		inflight: [2]prometheus.Gauge{inflight.WithLabelValues("readOnly"), inflight.WithLabelValues("mutating")},
		longrunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "apiserver_longrunning_requests",
			Help: "Open watches by verb, group, version, resource and scope."},
			[]string{"verb", "group", "version", "resource", "scope"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_watch_events_total",
			Help: "Events sent to watchers (bookmarks included) by group, version and resource."},
			[]string{"group", "version", "resource"}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "litek8s_api_forwarded_requests_total",
			Help: "Writes this member relayed to the leader, by the answer's HTTP code (503: the leader could not be reached; 500: the connection to it broke, outcome unknown)."},
			[]string{"code"}),
	}
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "litek8s_api_refused_requests_total",
		Help: "Requests answered 429 Too Many Requests, by reason: the in-flight limit that was full (max-requests-inflight, max-mutating-requests-inflight, max-watches-inflight) or disruption-budget (an eviction a PodDisruptionBudget held back)."},
		[]string{"reason"})
	for i, reason := range refusedReasonNames {
		// Every reason exists from the start at 0, so that rate() sees
		// the first refusal.
		m.refused[i] = refused.WithLabelValues(reason)
	}
	empty := map[routeKey]*route{}
	m.routes.Store(&empty)
	reg.MustRegister(m.requests, m.durations, inflight, m.longrunning, m.watchEvents, m.forwarded, refused)
	return m
}

// refusedReason is litek8s_api_refused_requests_total's reason: the
// in-flight limits in requestClass order, then the eviction's.
type refusedReason int

const (
	refusedReadOnly refusedReason = iota // classReadOnly
	refusedMutating                      // classMutating
	refusedWatch                         // classWatch
	refusedDisruptionBudget
	refusedReasons
)

// refusedReasonNames are the reason label values: the flags that set the
// in-flight limits, and disruption-budget.
var refusedReasonNames = [refusedReasons]string{
	"max-requests-inflight", "max-mutating-requests-inflight", "max-watches-inflight", "disruption-budget",
}

// refusedFor is the reason of a request of class refused for its
// in-flight limit.
func refusedFor(class requestClass) refusedReason { return refusedReason(class) }

// refuse counts one request answered 429 for reason (nothing without
// metrics).
func (m *metrics) refuse(reason refusedReason) {
	if m != nil {
		m.refused[reason].Inc()
	}
}

// routeKey identifies a route's labels. sub and scope are constants (the
// subresources served, the non-resource path classes, kube's scopes).
type routeKey struct {
	res   *registry.Resource // nil: a non-resource path, or a resource request that did not parse
	verb  string
	sub   string
	scope string
}

// route is the labelled children of one routeKey.
type route struct {
	labels      [6]string // verb, group, version, resource, subresource, scope
	duration    prometheus.Observer
	longrunning prometheus.Gauge // WATCH only
	watch       bool
	// codes are the request counters by HTTP code seen so far (a few per
	// route), read without a lock and copied on write.
	mu    sync.Mutex // serialises writers of codes
	codes atomic.Pointer[[]codeCounter]
}

type codeCounter struct {
	code int
	c    prometheus.Counter
}

// route returns the cached children of k.
func (m *metrics) route(k routeKey) *route {
	if rt := (*m.routes.Load())[k]; rt != nil {
		return rt
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.routes.Load()
	if rt := old[k]; rt != nil {
		return rt
	}
	rt := &route{watch: k.verb == verbWatch}
	rt.labels = [6]string{k.verb, "", "", "", k.sub, k.scope}
	if k.res != nil {
		rt.labels[1], rt.labels[2], rt.labels[3] = k.res.Group, k.res.Version, k.res.Resource
	}
	rt.duration = m.durations.WithLabelValues(rt.labels[:]...)
	if rt.watch {
		rt.longrunning = m.longrunning.WithLabelValues(rt.labels[0], rt.labels[1], rt.labels[2], rt.labels[3], rt.labels[5])
	}
	codes := []codeCounter{}
	rt.codes.Store(&codes)
	next := make(map[routeKey]*route, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[k] = rt
	m.routes.Store(&next)
	return rt
}

// forget drops the cached routes (the registry changed: custom resources'
// rows are new). The children stay in the vectors.
func (m *metrics) forget() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	empty := map[routeKey]*route{}
	m.routes.Store(&empty)
}

// count adds one answered request with code to rt.
func (m *metrics) count(rt *route, code int) {
	for _, cc := range *rt.codes.Load() {
		if cc.code == code {
			cc.c.Inc()
			return
		}
	}
	rt.mu.Lock()
	old := *rt.codes.Load()
	var c prometheus.Counter
	for _, cc := range old {
		if cc.code == code {
			c = cc.c
		}
	}
	if c == nil {
		c = m.requests.WithLabelValues(append(rt.labels[:], strconv.Itoa(code))...)
		next := append(append(make([]codeCounter, 0, len(old)+1), old...), codeCounter{code, c})
		rt.codes.Store(&next)
	}
	rt.mu.Unlock()
	c.Inc()
}

// kube's verbs (apiserver_request_total's verb label).
const (
	verbGet              = "GET"
	verbList             = "LIST"
	verbWatch            = "WATCH"
	verbCreate           = "CREATE"
	verbUpdate           = "UPDATE"
	verbPatch            = "PATCH"
	verbApply            = "APPLY"
	verbDelete           = "DELETE"
	verbDeleteCollection = "DELETECOLLECTION"
	verbOther            = "other" // kube's label for methods it does not know
)

// kube's scopes (metrics.CleanScope): a named object or a create is
// "resource", a collection in a namespace "namespace", any other
// collection (cluster-scoped, or every namespace) "cluster".
const (
	scopeResource  = "resource"
	scopeNamespace = "namespace"
	scopeCluster   = "cluster"
)

// methodVerb is the verb of a request that was not routed to a resource:
// kube's verb for the method.
func methodVerb(method string) string {
	switch method {
	case http.MethodGet:
		return verbGet
	case http.MethodPost:
		return verbCreate
	case http.MethodPut:
		return verbUpdate
	case http.MethodPatch:
		return verbPatch
	case http.MethodDelete:
		return verbDelete
	}
	return verbOther
}

// resourceVerb is kube's verb for a routed resource request.
func resourceVerb(r *http.Request, q *request, watch bool) string {
	switch r.Method {
	case http.MethodGet:
		switch {
		case !q.collection:
			return verbGet
		case watch:
			return verbWatch
		}
		return verbList
	case http.MethodDelete:
		if q.collection {
			return verbDeleteCollection
		}
		return verbDelete
	case http.MethodPatch:
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
			return verbApply
		}
		return verbPatch
	}
	return methodVerb(r.Method)
}

// subresourceLabel is the subresource label of a served subresource; ok
// is false for any other (a 404 whose path must not become a label).
func subresourceLabel(sub string) (string, bool) {
	switch sub {
	case "":
		return "", true
	case "status":
		return "status", true
	case "approval":
		return "approval", true
	case "scale":
		return "scale", true
	case "binding":
		return "binding", true
	case "finalize":
		return "finalize", true
	case "eviction", "ephemeralcontainers", "resize", "log", "exec", "attach", "portforward", "proxy":
		return sub, true
	}
	return "", false
}

// pathClass is the subresource label of a non-resource request (kube puts
// the path there), "" for a resource path (/api/v1/…, /apis/{g}/{v}/…),
// and ok=false for what is not counted: /metrics, /internal/, /admin/ and
// paths nothing serves.
func pathClass(path string) (class string, resource, ok bool) {
	switch path {
	case "/healthz", "/livez", "/readyz", "/version", "/api", "/apis":
		return path, false, true
	case "/metrics":
		return "", false, false
	}
	switch {
	case strings.HasPrefix(path, "/api/"):
		if strings.Count(path, "/") == 2 || (strings.Count(path, "/") == 3 && strings.HasSuffix(path, "/")) { // /api/v1
			return "/api", false, true
		}
		return "", true, true
	case strings.HasPrefix(path, "/apis/"):
		if n := strings.Count(strings.TrimSuffix(path, "/"), "/"); n <= 3 { // /apis/{group}[/{version}]
			return "/apis", false, true
		}
		return "", true, true
	case strings.HasPrefix(path, "/openapi/v3"):
		return "/openapi/v3", false, true
	case strings.HasPrefix(path, "/openapi/v2"):
		return "/openapi/v2", false, true
	}
	return "", false, false
}

// instrument counts the requests next serves (see metrics).
func (s *Server) instrument(next http.Handler) http.Handler {
	m := s.metrics
	if m == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		class, res, ok := pathClass(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w, m: m, start: time.Now(), kind: readOnly}
		if !res {
			rec.rt = m.route(routeKey{verb: methodVerb(r.Method), sub: class})
		}
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			rec.kind = mutating
		}
		m.inflight[rec.kind].Inc()
		defer rec.done(r)
		next.ServeHTTP(rec, r)
	})
}

// observe labels a resource request once it is routed: the handler's w is
// the recorder of instrument (nothing happens without metrics).
func (s *Server) observe(w http.ResponseWriter, r *http.Request, q *request, watch bool) {
	rec, ok := w.(*recorder)
	if !ok {
		return
	}
	sub, ok := subresourceLabel(q.subresource)
	if !ok {
		return
	}
	k := routeKey{res: q.res, verb: resourceVerb(r, q, watch), sub: sub, scope: scopeCluster}
	switch {
	case q.name != "" || k.verb == verbCreate:
		k.scope = scopeResource
	case q.namespace != "":
		k.scope = scopeNamespace
	}
	rec.rt = rec.m.route(k)
	if rec.rt.watch { // long-running: not in flight, but open
		rec.m.inflight[rec.kind].Dec()
		rec.rt.longrunning.Inc()
	}
}

// forwardedWrite counts a write relayed to the leader, under the code it
// was answered with.
func (m *metrics) forwardedWrite(w http.ResponseWriter) {
	if rec, ok := w.(*recorder); ok {
		m.forwarded.WithLabelValues(strconv.Itoa(rec.status())).Inc()
	}
}

// watchEventsOf returns the counter of the events sent to watchers of res
// (nil without metrics).
func (m *metrics) watchEventsOf(res *registry.Resource) prometheus.Counter {
	if m == nil {
		return nil
	}
	return m.watchEvents.WithLabelValues(res.Group, res.Version, res.Resource)
}

// recorder is the ResponseWriter of an instrumented request: it keeps the
// status code and, for a watch, observes the latency at the header.
type recorder struct {
	http.ResponseWriter
	m     *metrics
	rt    *route // nil until routed
	start time.Time
	code  int
	kind  requestKind
}

func (rec *recorder) WriteHeader(code int) {
	if rec.code == 0 {
		rec.code = code
		if rec.rt != nil && rec.rt.watch {
			rec.rt.duration.Observe(time.Since(rec.start).Seconds())
		}
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.code == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes).
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

func (rec *recorder) status() int {
	if rec.code == 0 {
		return http.StatusOK
	}
	return rec.code
}

// done counts the request once its handler returned.
func (rec *recorder) done(r *http.Request) {
	m, rt := rec.m, rec.rt
	if rt == nil { // a resource path that did not route
		rt = m.route(routeKey{verb: methodVerb(r.Method)})
	}
	if rt.watch {
		rt.longrunning.Dec()
		if rec.code == 0 {
			rt.duration.Observe(time.Since(rec.start).Seconds())
		}
	} else {
		m.inflight[rec.kind].Dec()
		rt.duration.Observe(time.Since(rec.start).Seconds())
	}
	m.count(rt, rec.status())
}

// objectsCollector reports the stored objects per resource at scrape time,
// from the store's immutable list views (a count, not a walk).
type objectsCollector struct {
	s                 *Server
	storage, resource *prometheus.Desc
}

func newObjectsCollector(s *Server) *objectsCollector {
	return &objectsCollector{s: s,
		storage: prometheus.NewDesc("apiserver_storage_objects",
			"Objects stored by resource (kube's resource.group; -1 when the store cannot be read).", []string{"resource"}, nil),
		resource: prometheus.NewDesc("apiserver_resource_objects",
			"Objects stored by group and resource (kube 1.34+'s successor of apiserver_storage_objects).", []string{"group", "resource"}, nil)}
}

func (c *objectsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.storage; ch <- c.resource }

func (c *objectsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx := context.Background() // a local read: it does not wait
	reg := c.s.refreshCRDs(ctx)
	seen := make(map[string]bool, len(reg.All()))
	for _, r := range reg.All() {
		key := r.StoreKey()
		if r.Review || seen[key] { // reviews are never stored; one row per stored resource
			continue
		}
		seen[key] = true
		n := -1.0
		if l, err := c.s.store.List(ctx, key, "", false); err == nil {
			n = float64(l.Len())
		}
		ch <- prometheus.MustNewConstMetric(c.storage, prometheus.GaugeValue, n, key)
		ch <- prometheus.MustNewConstMetric(c.resource, prometheus.GaugeValue, n, r.Group, r.Resource)
	}
}
