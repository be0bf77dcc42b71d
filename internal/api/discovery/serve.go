package discovery

import (
	"errors"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file turns handler results into HTTP answers, with the headers
// kube-apiserver 1.37 sends (golden discovery/*.meta, errors/*.meta).

const (
	// aggregatedContentType is the Content-Type of aggregated discovery.
	aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	// kubeMediaTypes is how kube-apiserver lists the media types its
	// discovery endpoints produce in a 406. litek8s produces only JSON here
	// but keeps kube's wording so that the answer is byte-identical.
	kubeMediaTypes = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
	// noCache is the Cache-Control of every non-aggregated answer.
	noCache = "no-cache, private"
)

// handlerFunc is a route handler. It writes the answer itself on success
// and returns the request errors of errors.go for adapt to answer.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// adapt turns a handlerFunc into an http.Handler: request errors get their
// answer; anything else is a failure to write, which is only logged.
func (h *Handler) adapt(f handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := f(w, r)
		switch {
		case err == nil:
		case errors.Is(err, errNotFound):
			writeNotFound(w, r)
		case errors.Is(err, errRouteNotAcceptable):
			h.logWrite(r, writeNotAcceptable(w, h.routeNotAcceptable))
		case errors.Is(err, errNotAcceptable):
			h.logWrite(r, writeNotAcceptable(w, h.negotiationNotAcceptable))
		default:
			h.logWrite(r, err)
		}
	})
}

func (h *Handler) logWrite(r *http.Request, err error) {
	if err != nil {
		h.log.Debug("discovery: answer not written", "path", r.URL.Path, "err", err)
	}
}

// writeAggregated sends aggregated discovery, or 304 when the client holds
// the same Etag (compared as kube-apiserver does: the whole If-None-Match).
func writeAggregated(w http.ResponseWriter, r *http.Request, doc aggregatedDocument, pretty bool) error {
	hdr := w.Header()
	hdr.Set("Cache-Control", "public")
	hdr.Set("Etag", doc.etag)
	hdr.Set("Vary", "Accept")
	if r.Header.Get("If-None-Match") == doc.etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	hdr.Set("Content-Type", aggregatedContentType)
	_, err := w.Write(doc.bytes(pretty))
	return err
}

// writeLegacy negotiates and sends a plain JSON document.
func writeLegacy(w http.ResponseWriter, r *http.Request, doc document) error {
	ok, pretty := acceptsLegacy(r.Header.Get("Accept"))
	if !ok {
		return errNotAcceptable
	}
	hdr := w.Header()
	hdr.Set("Cache-Control", noCache)
	hdr.Set("Content-Type", "application/json")
	_, err := w.Write(doc.bytes(pretty || prettyRequested(r)))
	return err
}

// writeNotFound is Go's plain-text "404 page not found", which is what
// kube-apiserver answers for an unknown group or version.
func writeNotFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", noCache)
	http.NotFound(w, r)
}

// writeNotAcceptable sends a precomputed 406 Status.
func writeNotAcceptable(w http.ResponseWriter, body []byte) error {
	hdr := w.Header()
	hdr.Set("Cache-Control", noCache)
	hdr.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotAcceptable)
	_, err := w.Write(body)
	return err
}

// routeNotAcceptableStatus is go-restful's 406, as kube-apiserver wraps it
// (errors/406-accept-xml.json): details is {}.
func routeNotAcceptableStatus() metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "406: Not Acceptable\n\nAvailable representations: " + kubeMediaTypes,
		Reason:   metav1.StatusReasonNotAcceptable,
		Details:  &metav1.StatusDetails{},
		Code:     http.StatusNotAcceptable,
	}
}

// negotiationNotAcceptableStatus is the 406 of kube-apiserver's content
// negotiation (discovery/apis-aggregated-v2beta1-only.json): no details.
func negotiationNotAcceptableStatus() metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "only the following media types are accepted: " + kubeMediaTypes,
		Reason:   metav1.StatusReasonNotAcceptable,
		Code:     http.StatusNotAcceptable,
	}
}
