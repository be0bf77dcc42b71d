package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// The write path. Every write is decided on the leader: the handler
// forwards first, then computes the object to store (decode or patch,
// defaults, managedFields, admission, validation) and proposes it with the
// revision it was computed from as a precondition. When another write got
// in between, the FSM answers Conflict and the whole step runs again on the
// new state (kube's GuaranteedUpdate); only a resourceVersion the client
// sent itself can end in 409.

// maxConflictRetries bounds the read-modify-write retries of one request.
const maxConflictRetries = 10

// maxNameGenerationCreateAttempts is how many names a create with
// generateName tries before giving up (kube: 8).
const maxNameGenerationCreateAttempts = 8

// serveWrite is the skeleton every write verb shares: a follower relays
// the request to the leader (forward); the leader parses the verb's
// options, runs the verb with a warnings collector and answers its
// result. Warnings go out as headers with the answer, an error's too.
// Each verb keeps only its own part: options and run (decode, admit,
// commit).
func serveWrite[O any](s *Server, w http.ResponseWriter, r *http.Request, options func(*http.Request) (O, error),
	run func(opts O, ws *warnings) (*writeResult, error)) error {
	if done, err := s.forward(w, r); done {
		return err
	}
	opts, err := options(r)
	if err != nil {
		return err
	}
	ws := &warnings{}
	s.withAdmissionWarnings(r, ws)
	defer ws.write(w)
	res, err := run(opts, ws)
	if err != nil {
		return err
	}
	respond(w, ws, res.code, res.raw)
	return nil
}

// create serves POST on a collection.
func (s *Server) create(w http.ResponseWriter, r *http.Request, q *request) error {
	return serveWrite(s, w, r, parseCreateOptions, func(opts *writeOptions, ws *warnings) (*writeResult, error) {
		obj, err := s.decodeBody(r, q.res, opts.validation, ws)
		if err != nil {
			return nil, err
		}
		s.normalize(q.res, obj)
		if err := s.checkCreateNamespace(r.Context(), q, obj); err != nil {
			return nil, err
		}
		if obj, err = s.trackUpdate(q.res, "", emptyObject(q.res), obj, opts.manager); err != nil {
			return nil, err
		}
		raw, err := s.commitCreate(r.Context(), q, obj, opts)
		if err != nil {
			return nil, err
		}
		return &writeResult{raw: raw, code: http.StatusCreated}, nil
	})
}

// respond writes the collected warnings and a JSON body.
func respond(w http.ResponseWriter, ws *warnings, code int, raw []byte) {
	ws.write(w)
	ws.msgs = nil
	writeRaw(w, code, raw)
}

// normalize applies the defaults every write of res gets.
func (s *Server) normalize(res *registry.Resource, obj runtime.Object) {
	if res.Normalize != nil {
		res.Normalize(obj)
	}
}

// checkCreateNamespace answers a create into a namespace that does not
// exist (404) or is being deleted (403), as kube's NamespaceLifecycle
// admission does.
func (s *Server) checkCreateNamespace(ctx context.Context, q *request, obj runtime.Object) error {
	if !q.res.Namespaced {
		return nil
	}
	nsRes := s.registry().Lookup("v1", "namespaces")
	ns, _, err := s.store.Get(ctx, kv.Key{Resource: "namespaces", Name: q.namespace}, false)
	if err != nil {
		return storeErr(err, nsRes, q.namespace)
	}
	if gjson.GetBytes(ns.Raw, "status.phase").Str != "Terminating" {
		return nil
	}
	name := q.name
	if m, err := apimeta.Accessor(obj); err == nil && name == "" {
		if name = m.GetName(); name == "" {
			name = m.GetGenerateName()
		}
	}
	return namespaceTerminating(q, name)
}

// commitCreate admits obj (metadata, Prepare, validation) and stores it,
// retrying with another generated name when generateName picked a taken
// one.
func (s *Server) commitCreate(ctx context.Context, q *request, obj runtime.Object, opts *writeOptions) ([]byte, error) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return nil, badRequest("the object has no metadata: %v", err)
	}
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	if err := s.admitCreateFromStore(ctx, q, obj); err != nil {
		return nil, err
	}
	if err := s.admitWriter(ctx, q, obj, nil); err != nil {
		return nil, err
	}
	if err := s.admitMutating(ctx, createWrite(q, obj, opts)); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		o := obj.DeepCopyObject()
		om, err := s.admitCreate(ctx, q, o)
		if err != nil {
			return nil, err
		}
		cq := *q
		cq.name = om.GetName()
		if attempt == 1 { // charged once: a retry with another generated name uses the same
			if err := s.admitValidating(ctx, createWrite(q, o, opts)); err != nil { // named by o
				return nil, err
			}
			if err := s.admitQuota(ctx, &cq, o, nil, opts.dryRun); err != nil {
				return nil, err
			}
		}
		if opts.dryRun {
			raw, err := encode(o)
			if err != nil {
				return nil, err
			}
			if err := s.checkObjectSize(q.res, cq.name, raw); err != nil {
				return nil, err
			}
			if _, _, err := s.store.Get(ctx, cq.key(), false); err == nil {
				return nil, apierrors.NewAlreadyExists(q.res.GroupResource(), cq.name)
			}
			return roundTrip(ctx, q.res, raw)
		}
		if u, ok := o.(*unstructured.Unstructured); ok {
			u.SetResourceVersion("0") // keeps the key where kube sorts it; the store stamps the revision
		}
		raw, err := encode(o)
		if err != nil {
			return nil, err
		}
		if raw, err = toStorage(ctx, q.res, raw); err != nil {
			return nil, err
		}
		if err := s.checkObjectSize(q.res, cq.name, raw); err != nil {
			return nil, err
		}
		stored, err := s.store.Propose(ctx, kv.Write{Op: kv.OpCreate, Key: cq.key(), Object: raw})
		switch {
		case err == nil:
			return toServed(ctx, q.res, stored.Raw)
		case !errors.Is(err, kv.ErrAlreadyExists):
			return nil, storeErr(err, q.res, cq.name)
		case generated && attempt < maxNameGenerationCreateAttempts:
			continue
		case generated:
			return nil, apierrors.NewGenerateNameConflict(q.res.GroupResource(), cq.name, 1)
		}
		se := apierrors.NewAlreadyExists(q.res.GroupResource(), cq.name)
		if cur, _, err := s.store.Get(ctx, cq.key(), false); err == nil && gjson.GetBytes(cur.Raw, "metadata.deletionTimestamp").Exists() {
			se.ErrStatus.Message = "object is being deleted: " + se.ErrStatus.Message
		}
		return nil, se
	}
}

// update serves PUT of an object or of its status or finalize subresource.
// A resourceVersion in the body is a precondition (409 when stale);
// without one the update is unconditional.
func (s *Server) update(w http.ResponseWriter, r *http.Request, q *request) error {
	return serveWrite(s, w, r, parseUpdateOptions, func(opts *writeOptions, ws *warnings) (*writeResult, error) {
		body, err := s.decodeBody(r, q.res, opts.validation, ws)
		if err != nil {
			return nil, err
		}
		bm, err := apimeta.Accessor(body)
		if err != nil {
			return nil, badRequest("the object has no metadata")
		}
		if bm.GetName() != q.name {
			return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", bm.GetName(), q.name)
		}
		if err := checkNamespace(q, bm); err != nil {
			return nil, err
		}
		s.normalize(q.res, body)
		return s.guaranteedUpdate(r.Context(), &mutation{q: q, opts: opts, ws: ws, uid: string(bm.GetUID()),
			desired: func(old runtime.Object, _ *kv.Object) (runtime.Object, error) {
				obj, err := s.trackUpdate(q.res, q.subresource, old, body.DeepCopyObject(), opts.manager)
				if err != nil {
					return obj, err
				}
				return subresourceOnly(q.subresource, old, obj), nil
			}})
	})
}

// mutation is one read-modify-write of an object.
type mutation struct {
	q    *request
	opts *writeOptions
	ws   *warnings
	// uid, when set, must be the object's (a PUT body's metadata.uid).
	uid string
	// desired returns the object the request asks for, given the stored
	// one (a copy the function may change) and its stored form: decoded
	// or patched, with defaults and managedFields. Server-owned metadata,
	// status rules, generation and validation are applied after it.
	desired func(old runtime.Object, cur *kv.Object) (runtime.Object, error)
	// create, when set, builds the object to create when none exists
	// (an apply patch); nil means a missing object is 404.
	create func() (runtime.Object, error)
}

// writeResult is what a write answers.
type writeResult struct {
	raw  []byte
	code int
}

// guaranteedUpdate runs u until it is stored or fails for a reason other
// than a concurrent write.
func (s *Server) guaranteedUpdate(ctx context.Context, u *mutation) (*writeResult, error) {
	q := u.q
	for range maxConflictRetries {
		u.ws.reset()
		cur, _, err := s.store.Get(ctx, q.key(), false)
		if errors.Is(err, kv.ErrNotFound) && u.create != nil {
			res, err := s.createMissing(ctx, u)
			if errors.Is(err, errRetry) {
				continue
			}
			return res, err
		}
		if err != nil {
			return nil, storeErr(err, q.res, q.name)
		}
		if cur, err = convertObject(ctx, q.res, cur); err != nil {
			return nil, err
		}
		res, err := s.updateOnce(ctx, u, cur)
		if errors.Is(err, errRetry) {
			continue
		}
		return res, err
	}
	return nil, storeErr(kv.ErrConflict, q.res, q.name)
}

// errRetry: the object changed while a write was computed; start over.
var errRetry = errors.New("retry")

// createMissing creates the object of an apply patch to a missing name.
func (s *Server) createMissing(ctx context.Context, u *mutation) (*writeResult, error) {
	obj, err := u.create()
	if err != nil {
		return nil, err
	}
	if err := s.checkCreateNamespace(ctx, u.q, obj); err != nil {
		return nil, err
	}
	if m, err := apimeta.Accessor(obj); err == nil && m.GetName() != u.q.name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), u.q.name)
	}
	raw, err := s.commitCreate(ctx, u.q, obj, u.opts)
	if apierrors.IsAlreadyExists(err) {
		return nil, errRetry // created in between: apply to it
	}
	if err != nil {
		return nil, err
	}
	return &writeResult{raw: raw, code: http.StatusCreated}, nil
}

// updateOnce computes and proposes one update of cur.
func (s *Server) updateOnce(ctx context.Context, u *mutation, cur *kv.Object) (*writeResult, error) {
	q := u.q
	old, err := decodeStored(q.res, cur)
	if err != nil {
		return nil, err
	}
	if u.uid != "" && u.uid != cur.UID {
		return nil, apierrors.NewConflict(q.res.GroupResource(), q.name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", u.uid, cur.UID))
	}
	obj, err := u.desired(old.DeepCopyObject(), cur)
	if err != nil {
		return nil, err
	}
	if err := s.admitWriter(ctx, q, obj, old); err != nil {
		return nil, err
	}
	if err := s.admitMutating(ctx, updateWrite(q, obj, old, u.opts)); err != nil {
		return nil, err
	}
	if err := s.admitUpdateFromStore(ctx, q, obj, old); err != nil {
		return nil, err
	}
	raw, err := s.admitUpdate(ctx, q, obj, old, cur)
	if err != nil {
		return nil, err
	}
	if err := s.admitValidating(ctx, updateWrite(q, obj, old, u.opts)); err != nil {
		return nil, err
	}
	if shouldDeleteDuringUpdate(q.res, obj, old) {
		// The last finalizer of an object being deleted is gone: kube
		// deletes it instead of storing the update, and answers the
		// updated object.
		if !u.opts.dryRun {
			_, err := s.store.Propose(ctx, kv.Write{Op: kv.OpDelete, Key: q.key(), ExpectedRV: cur.RV})
			if errors.Is(err, kv.ErrConflict) {
				return nil, errRetry
			}
			if err != nil && !errors.Is(err, kv.ErrNotFound) {
				return nil, storeErr(err, q.res, q.name)
			}
		}
		return &writeResult{raw: raw, code: http.StatusOK}, nil
	}
	// Nothing changed: no write, same resourceVersion; unless the stored
	// form is stale (an older encryption key), which kube rewrites.
	if bytes.Equal(raw, cur.Raw) && !cur.Stale {
		return &writeResult{raw: cur.Raw, code: http.StatusOK}, nil
	}
	if err := s.checkObjectSize(q.res, q.name, raw); err != nil {
		return nil, err
	}
	if err := s.admitQuota(ctx, q, obj, old, u.opts.dryRun); err != nil {
		return nil, err
	}
	if u.opts.dryRun {
		if raw, err = roundTrip(ctx, q.res, raw); err != nil {
			return nil, err
		}
		return &writeResult{raw: raw, code: http.StatusOK}, nil
	}
	if raw, err = toStorage(ctx, q.res, raw); err != nil {
		return nil, err
	}
	stored, err := s.store.Propose(ctx, kv.Write{Op: kv.OpUpdate, Key: q.key(), ExpectedRV: cur.RV, Object: raw})
	if errors.Is(err, kv.ErrConflict) {
		return nil, errRetry
	}
	if err != nil {
		return nil, storeErr(err, q.res, q.name)
	}
	if raw, err = toServed(ctx, q.res, stored.Raw); err != nil {
		return nil, err
	}
	return &writeResult{raw: raw, code: http.StatusOK}, nil
}

// decodeStored decodes a stored object of res.
func decodeStored(res *registry.Resource, cur *kv.Object) (runtime.Object, error) {
	obj := res.New()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if err := u.UnmarshalJSON(cur.Raw); err != nil {
			return nil, fmt.Errorf("api: decode stored %s: %w", cur.Key, err)
		}
		return u, nil
	}
	if err := json.Unmarshal(cur.Raw, obj); err != nil {
		return nil, fmt.Errorf("api: decode stored %s: %w", cur.Key, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	return obj, nil
}

// formatRV renders a revision as a resourceVersion.
func formatRV(rv uint64) string { return strconv.FormatUint(rv, 10) }
