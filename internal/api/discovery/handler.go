package discovery

import (
	"log/slog"
	"net/http"
)

// Handler serves discovery for a fixed table of resources. Build it with New;
// it is immutable and safe for concurrent use.
type Handler struct {
	log           *slog.Logger
	serverAddress string   // Config.ServerAddress; "" means the request's Host
	core          apiGroup // for /api when serverAddress is ""

	api, apis                document // legacy APIVersions (when serverAddress != "") and APIGroupList
	apiAggregated            aggregatedDocument
	apisAggregated           aggregatedDocument
	groups                   map[string]document          // APIGroup by group name
	resourceLists            map[groupVersionKey]document // APIResourceList by group version
	routeNotAcceptable       []byte                       // 406 from go-restful route selection
	negotiationNotAcceptable []byte                       // 406 from content negotiation
}

// groupVersionKey names a group version; group is "" for the core group.
type groupVersionKey struct{ group, version string }

// New validates cfg and the resource table and encodes every discovery
// document. The table is copied; the caller may reuse it.
func New(cfg Config, resources []Resource) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	idx, err := buildIndex(resources)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		log:           cfg.Logger,
		serverAddress: cfg.ServerAddress,
		core:          idx.core,
		groups:        make(map[string]document),
		resourceLists: make(map[groupVersionKey]document),
	}
	if err := h.encodeRoots(idx); err != nil {
		return nil, err
	}
	if err := h.encodeGroups(idx); err != nil {
		return nil, err
	}
	if err := h.encodeStatuses(); err != nil {
		return nil, err
	}
	return h, nil
}

// Register adds the discovery routes to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	// kube answers the roots and groups with a trailing slash too.
	for _, p := range []string{"GET /api", "GET /api/{$}"} {
		mux.Handle(p, h.adapt(h.serveAPI))
	}
	mux.Handle("GET /api/{version}", h.adapt(h.serveCoreVersion))
	for _, p := range []string{"GET /apis", "GET /apis/{$}"} {
		mux.Handle(p, h.adapt(h.serveAPIs))
	}
	for _, p := range []string{"GET /apis/{group}", "GET /apis/{group}/{$}"} {
		mux.Handle(p, h.adapt(h.serveGroup))
	}
	mux.Handle("GET /apis/{group}/{version}", h.adapt(h.serveGroupVersion))
}

// encodeRoots encodes /api and /apis, aggregated and legacy.
func (h *Handler) encodeRoots(idx index) error {
	var err error
	coreGroups := []apiGroup{}
	if len(idx.core.versions) > 0 {
		coreGroups = append(coreGroups, idx.core)
	}
	if h.apiAggregated, err = encodeAggregated(aggregatedList(coreGroups)); err != nil {
		return err
	}
	if h.apisAggregated, err = encodeAggregated(aggregatedList(idx.groups)); err != nil {
		return err
	}
	if h.serverAddress != "" {
		if h.api, err = encode(apiVersionsDoc(idx.core, h.serverAddress)); err != nil {
			return err
		}
	}
	h.apis, err = encode(apiGroupListDoc(idx.groups))
	return err
}

// encodeGroups encodes /apis/{group} and every APIResourceList.
func (h *Handler) encodeGroups(idx index) error {
	for _, g := range append([]apiGroup{idx.core}, idx.groups...) {
		if g.name != "" {
			doc, err := encode(apiGroupDoc(g))
			if err != nil {
				return err
			}
			h.groups[g.name] = doc
		}
		for _, v := range g.versions {
			doc, err := encode(apiResourceListDoc(g.name, v))
			if err != nil {
				return err
			}
			h.resourceLists[groupVersionKey{g.name, v.version}] = doc
		}
	}
	return nil
}

// encodeStatuses encodes the two 406 answers.
func (h *Handler) encodeStatuses() error {
	var err error
	if h.routeNotAcceptable, err = statusDocument(routeNotAcceptableStatus()); err != nil {
		return err
	}
	h.negotiationNotAcceptable, err = statusDocument(negotiationNotAcceptableStatus())
	return err
}
