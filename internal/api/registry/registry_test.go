package registry

import (
	"reflect"
	"testing"

	"github.com/litek8s/litek8s/internal/api/golden"
)

// readGolden returns a capture of internal/api/testdata/golden.
var readGolden = golden.Read

// TestBuiltinStoreKeys: every row has its own store key and a Go type
// registered in the scheme (request bodies decode).
func TestBuiltinStoreKeys(t *testing.T) {
	reg := New(Builtin())
	s, err := reg.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, r := range reg.All() {
		if keys[r.StoreKey()] {
			t.Errorf("store key %s used twice", r.StoreKey())
		}
		keys[r.StoreKey()] = true
		if !s.Recognizes(r.GVK()) {
			t.Errorf("%s: kind not in the scheme", r.GVK())
		}
		if r.Status && reflectField(r.New(), "Status") == false {
			t.Errorf("%s: status subresource without a status", r.GVK())
		}
	}
}

func reflectField(obj any, name string) bool {
	return reflect.ValueOf(obj).Elem().FieldByName(name).IsValid()
}
