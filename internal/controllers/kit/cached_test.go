package kit

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCached(t *testing.T) {
	boom := errors.New("boom")
	get := func(ns, name string) (string, error) {
		switch name {
		case "gone":
			return "", apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, name)
		case "broken":
			return "", boom
		}
		return ns + "|" + name, nil
	}
	for _, tt := range []struct {
		key, obj string
		ok, gone bool
		err      error
	}{
		{key: "ns/here", obj: "ns|here", ok: true},
		{key: "cluster", obj: "|cluster", ok: true},
		{key: "ns/gone", gone: true},
		{key: "ns/broken", err: boom},
		{key: "a/b/c"}, // malformed: nothing to sync, get is not called
	} {
		t.Run(tt.key, func(t *testing.T) {
			gone := false
			obj, ok, err := Cached(tt.key, get, func() { gone = true })
			if obj != tt.obj || ok != tt.ok || gone != tt.gone || !errors.Is(err, tt.err) {
				t.Errorf("Cached(%q) = %q, %v, %v (gone %v); want %q, %v, %v (gone %v)",
					tt.key, obj, ok, err, gone, tt.obj, tt.ok, tt.err, tt.gone)
			}
		})
	}
	if _, ok, err := Cached("ns/gone", get, nil); ok || err != nil {
		t.Errorf("a gone object without a gone func: ok %v, err %v", ok, err)
	}
}
