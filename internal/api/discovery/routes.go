package discovery

import "net/http"

// This file holds the route handlers. Each finds the precomputed answer and
// checks the Accept header in the order kube-apiserver does: path first (an
// unknown group or version is a 404 whatever the Accept), then go-restful's
// route selection on the routes kube serves through go-restful, then content
// negotiation.

// serveAPI is GET /api: aggregated discovery of the core group, or
// APIVersions.
func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request) error {
	accept := r.Header.Get("Accept")
	if !routeAccepts(accept) {
		return errRouteNotAcceptable
	}
	if ok, pretty := wantsAggregated(accept); ok {
		return writeAggregated(w, r, h.apiAggregated, pretty || prettyRequested(r))
	}
	doc, err := h.apiVersions(r)
	if err != nil {
		return err
	}
	return writeLegacy(w, r, doc)
}

// apiVersions returns the legacy /api document, naming the request's Host
// when no server address is configured.
func (h *Handler) apiVersions(r *http.Request) (document, error) {
	if h.serverAddress != "" {
		return h.api, nil
	}
	return encode(apiVersionsDoc(h.core, r.Host))
}

// serveAPIs is GET /apis: aggregated discovery of every non-core group, or
// APIGroupList. kube-apiserver serves it outside go-restful.
func (h *Handler) serveAPIs(w http.ResponseWriter, r *http.Request) error {
	if ok, pretty := wantsAggregated(r.Header.Get("Accept")); ok {
		return writeAggregated(w, r, h.apisAggregated, pretty || prettyRequested(r))
	}
	return writeLegacy(w, r, h.apis)
}

// serveGroup is GET /apis/{group}: APIGroup. kube-apiserver serves it
// outside go-restful.
func (h *Handler) serveGroup(w http.ResponseWriter, r *http.Request) error {
	doc, ok := h.groups[r.PathValue("group")]
	if !ok {
		return errNotFound
	}
	return writeLegacy(w, r, doc)
}

// serveCoreVersion is GET /api/{version}: APIResourceList.
func (h *Handler) serveCoreVersion(w http.ResponseWriter, r *http.Request) error {
	return h.serveResourceList(w, r, groupVersionKey{"", r.PathValue("version")})
}

// serveGroupVersion is GET /apis/{group}/{version}: APIResourceList.
func (h *Handler) serveGroupVersion(w http.ResponseWriter, r *http.Request) error {
	return h.serveResourceList(w, r, groupVersionKey{r.PathValue("group"), r.PathValue("version")})
}

func (h *Handler) serveResourceList(w http.ResponseWriter, r *http.Request, key groupVersionKey) error {
	doc, ok := h.resourceLists[key]
	if !ok {
		return errNotFound
	}
	if !routeAccepts(r.Header.Get("Accept")) {
		return errRouteNotAcceptable
	}
	return writeLegacy(w, r, doc)
}
