package api

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/api/table"
	"github.com/litek8s/litek8s/internal/kv"
)

// Derive computes, at apply time, what serving an object needs beyond its
// generic metadata: the values of the resource's field selectors (see
// registry.FieldsFor; only the fields it names are read, with gjson) and
// its Table cells. Wire it into the store (raftstore.Config.Derive);
// resource is the group-qualified plural.
func Derive(resource string, raw []byte) (map[string]string, kv.Row) {
	if strings.HasPrefix(resource, "_") { // the store's own records
		return nil, nil
	}
	return registry.FieldsFor(resource).Derive(raw), table.Lookup(resource).Cells(raw)
}

// EnsureNamespaces creates the namespaces that are missing, through the
// same admission as the API. Leader only; kv.ErrNotLeader otherwise.
func (s *Server) EnsureNamespaces(ctx context.Context, names ...string) error {
	res := s.registry().Lookup("v1", "namespaces")
	for _, name := range names {
		if err := s.ensure(ctx, &request{res: res, name: name}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return err
		}
	}
	return nil
}
