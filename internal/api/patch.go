package api

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/litek8s/litek8s/internal/kv"
)

// patch serves PATCH of one object: a read-modify-write on the leader,
// retried when the object changes in between (only a resourceVersion the
// client put in its patch can end in 409 Conflict).
func (s *Server) patch(w http.ResponseWriter, r *http.Request, q *request) error {
	if done, err := s.forward(w, r); done {
		return err
	}
	apply, err := patchFunc(r.Header.Get("Content-Type"), q.res)
	if err != nil {
		return err
	}
	dryRun, err := parseDryRun(r)
	if err != nil {
		return err
	}
	if _, err := parseFieldValidation(r); err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		return errBodyTooLarge
	}
	for range maxConflictRetries {
		cur, _, err := s.store.Get(r.Context(), q.key(), false)
		if err != nil {
			return storeErr(err, q.res, q.name)
		}
		patched, err := apply(cur.Raw, body)
		if err != nil {
			return err
		}
		obj, err := s.decodeJSON(w, r, q.res, patched)
		if err != nil {
			return err
		}
		expect := cur.RV
		if m, err := metaOf(obj); err == nil && m.GetResourceVersion() != strconv.FormatUint(cur.RV, 10) && m.GetResourceVersion() != "" {
			return storeErr(kv.ErrConflict, q.res, q.name) // the patch carried a stale resourceVersion
		}
		if _, err := s.admitUpdate(q, obj, cur); err != nil {
			return err
		}
		raw, err := encode(obj)
		if err != nil {
			return err
		}
		if dryRun {
			writeRaw(w, http.StatusOK, raw)
			return nil
		}
		stored, err := s.store.Propose(r.Context(), kv.Write{Op: kv.OpUpdate, Key: q.key(), ExpectedRV: expect, Object: raw})
		if errors.Is(err, kv.ErrConflict) {
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

// patchFunc returns the function applying a patch of contentType to an
// object's JSON.
func patchFunc(contentType string, res *resource) (func(cur, patch []byte) ([]byte, error), error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/json-patch+json":
		return func(cur, p []byte) ([]byte, error) {
			ops, err := jsonpatch.DecodePatch(p)
			if err != nil {
				return nil, badRequest("the server rejected our request due to an error in our request: %v", err)
			}
			out, err := ops.Apply(cur)
			if err != nil {
				return nil, unprocessable(err)
			}
			return out, nil
		}, nil
	case "application/merge-patch+json":
		return func(cur, p []byte) ([]byte, error) {
			out, err := jsonpatch.MergePatch(cur, p)
			if err != nil {
				return nil, badRequest("the server rejected our request due to an error in our request: %v", err)
			}
			return out, nil
		}, nil
	case "application/strategic-merge-patch+json":
		return func(cur, p []byte) ([]byte, error) {
			out, err := strategicpatch.StrategicMergePatch(cur, p, res.New())
			if err != nil {
				return nil, badRequest("the server rejected our request due to an error in our request: %v", err)
			}
			return out, nil
		}, nil
	}
	return nil, errPatchMediaType
}

// metaOf returns the object's metadata accessor.
func metaOf(obj runtime.Object) (interface{ GetResourceVersion() string }, error) {
	m, ok := obj.(interface{ GetResourceVersion() string })
	if !ok {
		return nil, errors.New("no metadata")
	}
	return m, nil
}
