package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/kv"
)

// delete serves DELETE of one object. DeleteOptions in the body replace the
// query parameters (as in kube); preconditions on uid and resourceVersion
// are checked by the store when the delete applies.
func (s *Server) delete(w http.ResponseWriter, r *http.Request, q *request) error {
	if done, err := s.forward(w, r); done {
		return err
	}
	opts, err := s.parseDeleteOptions(r)
	if err != nil {
		return err
	}
	cur, _, err := s.store.Get(r.Context(), q.key(), false)
	if err != nil {
		return storeErr(err, q.res, q.name)
	}
	wr := kv.Write{Op: kv.OpDelete, Key: q.key()}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil {
			wr.ExpectedUID = string(*p.UID)
		}
		if p.ResourceVersion != nil {
			if wr.ExpectedRV, err = strconv.ParseUint(*p.ResourceVersion, 10, 64); err != nil {
				return badRequest("invalid resourceVersion precondition %q", *p.ResourceVersion)
			}
		}
	}
	if err := s.checkDeletePreconditions(r.Context(), q, &wr, cur); err != nil {
		return err
	}
	if len(opts.DryRun) > 0 {
		writeStatusSuccess(w, q.res, q.name, cur.UID)
		return nil
	}
	if q.res.storeKey() == crdStoreKey {
		if err := s.deleteCustomObjects(r.Context(), cur); err != nil {
			return err
		}
	}
	if q.res.Resource == "namespaces" && q.res.Group == "" {
		if err := s.emptyNamespace(r, q.name); err != nil {
			return err
		}
	}
	if _, err := s.store.Propose(r.Context(), wr); err != nil {
		if errors.Is(err, kv.ErrConflict) {
			return s.checkDeletePreconditions(r.Context(), q, &wr, nil)
		}
		return storeErr(err, q.res, q.name)
	}
	writeStatusSuccess(w, q.res, q.name, cur.UID)
	return nil
}

// checkDeletePreconditions words a failed precondition like kube. With cur
// nil it re-reads the object (after the store refused the delete).
func (s *Server) checkDeletePreconditions(ctx context.Context, q *request, wr *kv.Write, cur *kv.Object) error {
	if cur == nil {
		var err error
		if cur, _, err = s.store.Get(ctx, q.key(), false); err != nil {
			return storeErr(err, q.res, q.name)
		}
	}
	gr := schema.GroupResource{Group: q.res.Group, Resource: q.res.Kind}
	if wr.ExpectedUID != "" && wr.ExpectedUID != cur.UID {
		return apierrors.NewConflict(gr, q.name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", wr.ExpectedUID, cur.UID))
	}
	if wr.ExpectedRV != 0 && wr.ExpectedRV != cur.RV {
		return apierrors.NewConflict(gr, q.name, fmt.Errorf("the ResourceVersion in the precondition (%d) does not match the ResourceVersion in record (%d). The object might have been modified", wr.ExpectedRV, cur.RV))
	}
	return nil
}

// parseDeleteOptions reads DeleteOptions from the body, or else from the
// query (dryRun).
func (s *Server) parseDeleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		return nil, badRequest("reading the request body: %v", err)
	}
	if len(body) > 0 {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch mt {
		case "application/vnd.kubernetes.protobuf":
			gvk := schema.GroupVersionKind{Version: "v1", Kind: "DeleteOptions"}
			_, _, err = s.codecs.proto.Decode(body, &gvk, opts)
		case "application/json", "":
			err = json.Unmarshal(body, opts)
		default:
			return nil, errUnsupportedMediaType
		}
		if err != nil {
			return nil, badRequest("the body of the request is not a valid DeleteOptions: %v", err)
		}
	} else {
		opts.DryRun = r.URL.Query()["dryRun"]
	}
	for _, v := range opts.DryRun {
		if v != metav1.DryRunAll {
			return nil, badRequest("unsupported dryRun value %q: only All is supported", v)
		}
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan:
		default:
			return nil, badRequest("unsupported propagationPolicy %q", *p)
		}
	}
	return opts, nil
}

// emptyNamespace deletes every object in namespace ns before the namespace
// itself goes (until the namespace controller does it asynchronously).
func (s *Server) emptyNamespace(r *http.Request, ns string) error {
	for _, res := range s.registry().all {
		if !res.Namespaced {
			continue
		}
		l, err := s.store.List(r.Context(), res.storeKey(), ns, false)
		if err != nil {
			return availabilityErr(err)
		}
		var ferr error
		l.Range("", func(obj *kv.Object) bool {
			_, err := s.store.Propose(r.Context(), kv.Write{Op: kv.OpDelete, Key: obj.Key, ExpectedUID: obj.UID})
			if err != nil && !errors.Is(err, kv.ErrNotFound) && !errors.Is(err, kv.ErrConflict) {
				ferr = availabilityErr(err)
			}
			return ferr == nil
		})
		if ferr != nil {
			return ferr
		}
	}
	return nil
}
