package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeAPIServer is the least of an API server that kubectl apply and
// explain need besides the OpenAPI documents: /version, legacy discovery,
// GET of objects and of the default namespace, and POST/PATCH that record
// what kubectl sent. POST decodes the body strictly into the kind's Go
// type, as kube-apiserver does under fieldValidation=Strict.
type fakeAPIServer struct {
	*httptest.Server
	kinds []Kind

	mu       sync.Mutex // guards requests and objects
	requests []recorded
	objects  map[string][]byte // stored objects by URL path
}

// recorded is one request kubectl made.
type recorded struct {
	method, path, query, contentType string
	body                             []byte
}

func newFakeAPIServer(t *testing.T, h *Handler, kinds []Kind) *fakeAPIServer {
	t.Helper()
	f := &fakeAPIServer{kinds: kinds, objects: make(map[string][]byte)}
	mux := http.NewServeMux()
	h.Register(mux)
	mux.HandleFunc("GET /version", serveJSON(http.StatusOK, map[string]string{
		"major": "1", "minor": "37", "gitVersion": "v1.37.2", "platform": "linux/amd64",
	}))
	mux.HandleFunc("GET /api", serveJSON(http.StatusOK, metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
	}))
	mux.HandleFunc("GET /apis", serveJSON(http.StatusOK, groupList(kinds)))
	mux.HandleFunc("GET /api/v1/namespaces/default", serveJSON(http.StatusOK, map[string]any{
		"kind": "Namespace", "apiVersion": "v1", "metadata": map[string]string{"name": "default"},
	}))
	for _, gv := range groupVersions(kinds) {
		mux.HandleFunc("GET "+gv.urlPrefix(), serveJSON(http.StatusOK, resourceList(gv, kindsOf(kinds, gv))))
	}
	mux.HandleFunc("/", f.serveObjects)
	f.Server = httptest.NewTLSServer(f.record(mux))
	t.Cleanup(f.Close)
	return f
}

// record notes every request before serving it.
func (f *fakeAPIServer) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body})
		f.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// recorded returns the requests made so far with method.
func (f *fakeAPIServer) recorded(method string) []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.requests {
		if r.method == method {
			out = append(out, r)
		}
	}
	return out
}

// paths returns every path requested so far.
func (f *fakeAPIServer) paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		out = append(out, r.method+" "+r.path)
	}
	return out
}

// serveObjects answers GET, POST and PATCH of namespaced objects of the
// served kinds.
func (f *fakeAPIServer) serveObjects(w http.ResponseWriter, r *http.Request) {
	k, name, ok := f.route(r.URL.Path)
	switch {
	case !ok:
		serveJSON(http.StatusNotFound, status(http.StatusNotFound, "NotFound", "no route for "+r.URL.Path))(w, r)
	case r.Method == http.MethodPost && name == "":
		f.create(w, r, k)
	case r.Method == http.MethodGet && name != "":
		f.mu.Lock()
		obj, found := f.objects[r.URL.Path]
		f.mu.Unlock()
		if !found {
			serveJSON(http.StatusNotFound, status(http.StatusNotFound, "NotFound",
				k.Resource+" \""+name+"\" not found"))(w, r)
			return
		}
		serveRaw(w, http.StatusOK, obj)
	case r.Method == http.MethodPatch && name != "":
		f.mu.Lock()
		obj := f.objects[r.URL.Path]
		f.mu.Unlock()
		serveRaw(w, http.StatusOK, obj) // the patch itself is only recorded
	default:
		serveJSON(http.StatusMethodNotAllowed, status(http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method))(w, r)
	}
}

// create decodes the body strictly and stores it under its name.
func (f *fakeAPIServer) create(w http.ResponseWriter, r *http.Request, k Kind) {
	body, _ := io.ReadAll(r.Body)
	obj := reflect.New(k.Type).Interface()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		serveJSON(http.StatusBadRequest, status(http.StatusBadRequest, "BadRequest",
			k.Kind+" in version \""+k.Version+"\" cannot be handled as a "+k.Kind+": strict decoding error: "+err.Error()))(w, r)
		return
	}
	name := obj.(metav1.Object).GetName()
	f.mu.Lock()
	f.objects[r.URL.Path+"/"+name] = body
	f.mu.Unlock()
	serveRaw(w, http.StatusCreated, body)
}

// route maps /api(s)/.../namespaces/{ns}/{resource}[/{name}] to its kind.
func (f *fakeAPIServer) route(path string) (Kind, string, bool) {
	for _, k := range f.kinds {
		prefix := k.groupVersion().urlPrefix() + "/namespaces/default/" + k.Resource
		if path == prefix {
			return k, "", true
		}
		if name, ok := strings.CutPrefix(path, prefix+"/"); ok && !strings.Contains(name, "/") {
			return k, name, true
		}
	}
	return Kind{}, "", false
}

func groupList(kinds []Kind) metav1.APIGroupList {
	list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, gv := range groupVersions(kinds) {
		if gv.group == "" {
			continue
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.group + "/" + gv.version, Version: gv.version}
		list.Groups = append(list.Groups, metav1.APIGroup{
			Name: gv.group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v,
		})
	}
	return list
}

func resourceList(gv groupVersion, kinds []Kind) metav1.APIResourceList {
	list := metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.version,
	}
	if gv.group != "" {
		list.GroupVersion = gv.group + "/" + gv.version
	}
	for _, k := range kinds {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: k.Resource, Namespaced: k.Namespaced, Kind: k.Kind, Verbs: k.Verbs,
			SingularName: strings.ToLower(k.Kind),
		})
	}
	return list
}

func status(code int32, reason metav1.StatusReason, msg string) metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: code,
	}
}

func serveJSON(code int, v any) http.HandlerFunc {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err) // test fixtures only
	}
	return func(w http.ResponseWriter, _ *http.Request) { serveRaw(w, code, body) }
}

func serveRaw(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}
