package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Handler serves the /openapi/v3 index and the group-version documents.
// It builds them when first asked (an idle member never pays for them:
// they are the largest thing a member holds before it stores anything)
// and is safe for concurrent use.
type Handler struct {
	kinds []Kind
	now   func() time.Time // clock for Expires

	once sync.Once
	set  *docSet
	err  error
}

// docSet is what a Handler serves, immutable once built.
type docSet struct {
	index        []byte              // the /openapi/v3 body
	docs         map[string]document // by index key: "api/v1", "apis/apps/v1"
	lastModified time.Time           // when the documents were generated
	v2           *v2Document         // /openapi/v2, built from docs when first asked for
}

// New checks kinds and returns their Handler; the documents are generated
// on the first request (or Build). It fails if a kind is invalid.
func New(kinds []Kind) (*Handler, error) {
	if err := validateKinds(kinds); err != nil {
		return nil, err
	}
	return &Handler{kinds: kinds, now: time.Now}, nil
}

// Build generates the documents now if no request did yet; it fails if a
// type cannot be described.
func (h *Handler) Build() error {
	_, err := h.load()
	return err
}

func (h *Handler) load() (*docSet, error) {
	h.once.Do(func() { h.set, h.err = buildSet(h.kinds) })
	return h.set, h.err
}

func buildSet(kinds []Kind) (*docSet, error) {
	hints := loadMergeHints(kinds)
	version := serverVersion()
	set := &docSet{docs: make(map[string]document), lastModified: time.Now().UTC().Truncate(time.Second)}
	for _, gv := range groupVersions(kinds) {
		spec, err := buildDocument(gv, kindsOf(kinds, gv), hints, version)
		if err != nil {
			return nil, err
		}
		if set.docs[gv.docPath()], err = newDocument(spec); err != nil {
			return nil, err
		}
	}
	var err error
	if set.index, err = buildIndex(set.docs); err != nil {
		return nil, err
	}
	set.v2 = &v2Document{v3: set.docs}
	return set, nil
}

// loadOr500 returns the documents, or answers 500 when they cannot be built.
func (h *Handler) loadOr500(w http.ResponseWriter) *docSet {
	set, err := h.load()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
	return set
}

// Register routes GET (and HEAD) /openapi/v2, /openapi/v3 and
// /openapi/v3/{path...} on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /openapi/v2", h.serveV2)
	mux.HandleFunc("GET /openapi/v3", h.serveIndex)
	mux.HandleFunc("GET /openapi/v3/{path...}", h.serveDocument)
}

// serveIndex answers the index the way kube-apiserver does: text/plain,
// never cached without revalidation.
func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	set := h.loadOr500(w)
	if set == nil {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, private")
	http.ServeContent(w, r, "", set.lastModified, bytes.NewReader(set.index))
}

// serveDocument answers one document. With the current ?hash= it may be
// cached for a year; with a stale one it redirects to the current URL, as
// kube-openapi does; without one clients must revalidate (Etag,
// Last-Modified).
func (h *Handler) serveDocument(w http.ResponseWriter, r *http.Request) {
	set := h.loadOr500(w)
	if set == nil {
		return
	}
	key := r.PathValue("path")
	doc, ok := set.docs[key]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Vary", "Accept")
	if !acceptsJSON(r.Header.Get("Accept")) {
		http.Error(w, "406 Not Acceptable: the OpenAPI v3 documents are served as application/json only",
			http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Cache-Control", "no-cache, private")
	switch hash := r.URL.Query().Get("hash"); hash {
	case "":
	case doc.hash:
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", h.now().UTC().AddDate(1, 0, 0).Format(time.RFC1123))
	default:
		http.Redirect(w, r, documentURL(key, doc.hash), http.StatusMovedPermanently)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", strconv.Quote(doc.hash))
	http.ServeContent(w, r, "", set.lastModified, bytes.NewReader(doc.body))
}

// acceptsJSON reports whether an Accept header admits application/json.
// No header accepts anything.
func acceptsJSON(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, clause := range strings.Split(accept, ",") {
		mediaType, _, _ := strings.Cut(clause, ";")
		switch strings.ToLower(strings.TrimSpace(mediaType)) {
		case "application/json", "application/*", "*/*":
			return true
		}
	}
	return false
}

// documentURL is the server-relative URL the index gives for a document.
func documentURL(key, hash string) string { return "/openapi/v3/" + key + "?hash=" + hash }

// buildIndex renders the /openapi/v3 body: every document's URL with its
// hash, keys sorted (encoding/json sorts map keys), no trailing newline.
func buildIndex(docs map[string]document) ([]byte, error) {
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	paths := make(map[string]entry, len(docs))
	for key, doc := range docs {
		paths[key] = entry{documentURL(key, doc.hash)}
	}
	body, err := json.Marshal(struct {
		Paths map[string]entry `json:"paths"`
	}{paths})
	if err != nil {
		return nil, fmt.Errorf("openapi: marshal index: %w", err)
	}
	return body, nil
}
