package api

import (
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/kv"
)

// maxConflictRetries bounds read-modify-write retries of updates that carry
// no resourceVersion (kube's GuaranteedUpdate retries the same way).
const maxConflictRetries = 10

// create serves POST on a collection.
func (s *Server) create(w http.ResponseWriter, r *http.Request, q *request) error {
	if done, err := s.forward(w, r); done {
		return err
	}
	dryRun, err := parseDryRun(r)
	if err != nil {
		return err
	}
	obj, err := s.decodeBody(w, r, q.res)
	if err != nil {
		return err
	}
	m, err := s.admitCreate(q, obj)
	if err != nil {
		return err
	}
	q.name = m.GetName()
	if q.res.Namespaced {
		if _, _, err := s.store.Get(r.Context(), kv.Key{Resource: "namespaces", Name: q.namespace}, false); err != nil {
			return storeErr(err, s.registry().lookup("v1", "namespaces"), q.namespace)
		}
	}
	raw, err := encode(obj)
	if err != nil {
		return err
	}
	if dryRun {
		if _, _, err := s.store.Get(r.Context(), q.key(), false); err == nil {
			return storeErr(kv.ErrAlreadyExists, q.res, q.name)
		}
		writeRaw(w, http.StatusCreated, raw)
		return nil
	}
	stored, err := s.store.Propose(r.Context(), kv.Write{Op: kv.OpCreate, Key: q.key(), Object: raw})
	if err != nil {
		return storeErr(err, q.res, q.name)
	}
	writeRaw(w, http.StatusCreated, stored.Raw)
	return nil
}

// update serves PUT of one object. A resourceVersion in the body is a
// precondition (409 when stale); without one the update is a
// read-modify-write retried on conflict.
func (s *Server) update(w http.ResponseWriter, r *http.Request, q *request) error {
	if done, err := s.forward(w, r); done {
		return err
	}
	dryRun, err := parseDryRun(r)
	if err != nil {
		return err
	}
	body, err := s.decodeBody(w, r, q.res)
	if err != nil {
		return err
	}
	bm, err := apimeta.Accessor(body)
	if err != nil {
		return badRequest("the object has no metadata")
	}
	var clientRV uint64
	if rv := bm.GetResourceVersion(); rv != "" {
		if clientRV, err = strconv.ParseUint(rv, 10, 64); err != nil {
			return badRequest("invalid resourceVersion %q", rv)
		}
	}
	for range maxConflictRetries {
		obj := body.DeepCopyObject()
		cur, _, err := s.store.Get(r.Context(), q.key(), false)
		if err != nil {
			return storeErr(err, q.res, q.name)
		}
		if _, err := s.admitUpdate(q, obj, cur); err != nil {
			return err
		}
		raw, err := encode(obj)
		if err != nil {
			return err
		}
		expect := clientRV
		if expect == 0 {
			expect = cur.RV
		}
		if dryRun {
			if expect != cur.RV {
				return storeErr(kv.ErrConflict, q.res, q.name)
			}
			writeRaw(w, http.StatusOK, raw)
			return nil
		}
		stored, err := s.store.Propose(r.Context(), kv.Write{Op: kv.OpUpdate, Key: q.key(), ExpectedRV: expect, Object: raw})
		if errors.Is(err, kv.ErrConflict) && clientRV == 0 {
			continue
		}
		if err != nil {
			return storeErr(err, q.res, q.name)
		}
		writeRaw(w, http.StatusOK, stored.Raw)
		return nil
	}
	return storeErr(kv.ErrConflict, q.res, q.name)
}

// parseDryRun accepts dryRun=All (nothing is stored) and rejects other values.
func parseDryRun(r *http.Request) (bool, error) {
	vals := r.URL.Query()["dryRun"]
	for _, v := range vals {
		if v != metav1.DryRunAll {
			return false, badRequest("unsupported dryRun value %q: only All is supported", v)
		}
	}
	return len(vals) > 0, nil
}

var _ = apierrors.IsNotFound
