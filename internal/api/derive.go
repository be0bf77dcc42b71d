package api

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/api/table"
	"github.com/litek8s/litek8s/internal/kv"
)

// Derive computes, at apply time, what serving an object needs beyond its
// generic metadata: the values of the resource's field selectors (see
// fieldTable; only the fields it names are read, with gjson) and its Table
// cells. Wire it into the store (raftstore.Config.Derive); resource is the
// group-qualified plural.
func Derive(resource string, raw []byte) (map[string]string, []kv.Cell) {
	if strings.HasPrefix(resource, "_") { // the store's own records
		return nil, nil
	}
	return fieldsFor(resource).derive(raw), table.Lookup(resource).Cells(raw)
}

// EnsureNamespaces creates the namespaces that are missing, through the
// same admission as the API. Leader only; kv.ErrNotLeader otherwise.
func (s *Server) EnsureNamespaces(ctx context.Context, names ...string) error {
	res := s.registry().lookup("v1", "namespaces")
	for _, name := range names {
		q := &request{res: res, name: name}
		if _, _, err := s.store.Get(ctx, q.key(), false); err == nil {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		ns.GetObjectKind().SetGroupVersionKind(res.gvk())
		if _, err := s.admitCreate(q, ns); err != nil {
			return err
		}
		raw, err := encode(ns)
		if err != nil {
			return err
		}
		_, err = s.store.Propose(ctx, kv.Write{Op: kv.OpCreate, Key: q.key(), Object: raw})
		if err != nil && !errors.Is(err, kv.ErrAlreadyExists) {
			return err
		}
	}
	return nil
}
