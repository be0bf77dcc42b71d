package api

import (
	"encoding/json"
	"mime"
	"net/http"

	"k8s.io/apimachinery/pkg/api/errors"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// delete serves DELETE of one object (see finalize.go for what deleting
// means). DeleteOptions in the body replace the query parameters, as in
// kube.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, q *request) error {
	return serveWrite(s, w, r, s.parseDeleteOptions, func(opts *metav1.DeleteOptions, _ *warnings) (*writeResult, error) {
		if q.res.StoreKey() == "namespaces" && immortalNamespaces[q.name] {
			return nil, errImmortalNamespace(q.name)
		}
		if err := s.admitNodeDelete(r.Context(), q); err != nil {
			return nil, err
		}
		if err := checkConvertible(r.Context(), s, q); err != nil {
			return nil, err
		}
		res, err := s.deleteObject(r.Context(), q, opts)
		if err != nil {
			return nil, err
		}
		if res.raw != nil {
			if res.raw, err = toServed(r.Context(), q.res, res.raw); err != nil {
				return nil, err
			}
		}
		return deleteAnswer(q, opts, res), nil
	})
}

// deleteCollection serves DELETE on a collection: every object matching
// the label and field selectors is deleted as by its own DELETE, and the
// answer is the List of the objects deleted (as they were listed).
func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, q *request) error {
	type collectionOptions struct {
		sel  *selector
		opts *metav1.DeleteOptions
	}
	options := func(r *http.Request) (c collectionOptions, err error) {
		if c.sel, err = parseSelector(r.URL.Query(), q.res); err != nil {
			return c, err
		}
		c.opts, err = s.parseDeleteOptions(r)
		return c, err
	}
	return serveWrite(s, w, r, options, func(c collectionOptions, _ *warnings) (*writeResult, error) {
		l, err := s.store.List(r.Context(), q.res.StoreKey(), q.namespace, false)
		if err != nil {
			return nil, availabilityErr(err)
		}
		var items []*kv.Object
		l.Range("", func(obj *kv.Object) bool {
			if c.sel.matches(obj) {
				items = append(items, obj)
			}
			return true
		})
		for _, obj := range items {
			oq := &request{res: q.res, namespace: obj.Key.Namespace, name: obj.Key.Name}
			o := *c.opts
			if _, err := s.deleteObject(r.Context(), oq, &o); err != nil && !errors.IsNotFound(err) {
				return nil, err
			}
		}
		return &writeResult{raw: deletedList(q.res, l.Rev, items), code: http.StatusOK}, nil
	})
}

// deletedList renders the answer of a deletecollection: a List in the
// resource's list format.
func deletedList(res *registry.Resource, rev uint64, items []*kv.Object) []byte {
	var b, tail []byte
	if hasProtobuf(res) {
		b = appendListHeader(make([]byte, 0, 1024), res, rev, "", 0)
		tail = []byte("]}")
	} else {
		b, tail = appendCustomListParts(make([]byte, 0, 1024), res, rev, "", 0)
		tail = tail[:len(tail)-1] // writeRaw adds the newline
	}
	for i, obj := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = listItem(b, obj, res)
	}
	return append(b, tail...)
}

// parseDeleteOptions reads DeleteOptions from the body, or else from the
// query, and validates them like kube (422 DeleteOptions).
func (s *Server) parseDeleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch mt {
		case "application/vnd.kubernetes.protobuf":
			gvk := schema.GroupVersionKind{Version: "v1", Kind: "DeleteOptions"}
			_, _, err = s.codecs.proto.Decode(body, &gvk, opts)
		case "application/json", "":
			err = json.Unmarshal(body, opts)
		case "application/yaml":
			gvk := schema.GroupVersionKind{Version: "v1", Kind: "DeleteOptions"}
			_, _, err = s.codecs.yaml.Decode(body, &gvk, opts)
		default:
			return nil, errUnsupportedMediaType
		}
		if err != nil {
			return nil, badRequest("%v", err)
		}
	} else if err := metainternalscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, badRequest("%v", err)
	}
	if errs := metavalidation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, invalidOptions("DeleteOptions", errs)
	}
	return opts, nil
}
