package api

import (
	"bytes"
	"encoding/json"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// dialSchema: defaults at the top, inside an object, in array items and
// in additionalProperties.
func dialSchema(t testing.TB) *structuralschema.Structural {
	t.Helper()
	const schema = `{"type":"object","properties":{
	 "metadata":{"type":"object"},
	 "mode":{"type":"string","default":"auto"},
	 "spec":{"type":"object","properties":{"size":{"type":"integer","default":3},"name":{"type":"string"}}},
	 "ports":{"type":"array","items":{"type":"object","properties":{"protocol":{"type":"string","default":"TCP"},"port":{"type":"integer"}}}},
	 "labels":{"type":"object","additionalProperties":{"type":"object","properties":{"weight":{"type":"integer","default":1}}}}}}`
	var v apiextv1.CustomResourceDefinitionVersion
	if err := json.Unmarshal([]byte(`{"name":"v1","schema":{"openAPIV3Schema":`+schema+`}}`), &v); err != nil {
		t.Fatal(err)
	}
	props, err := internalSchema(&v)
	if err != nil {
		t.Fatal(err)
	}
	st, err := structuralschema.NewStructural(props)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// missesDefault says a stored object needs defaulting exactly when
// applyDefaults changes it, so that defaultRaw decodes only those.
func TestMissesDefault(t *testing.T) {
	st := dialSchema(t)
	for _, raw := range []string{
		`{"metadata":{"name":"a"}}`,
		`{"metadata":{"name":"a"},"mode":"x"}`,
		`{"mode":"x","spec":{}}`,
		`{"mode":"x","spec":{"size":1}}`,
		`{"mode":"x","spec":{"size":1},"ports":[]}`,
		`{"mode":"x","spec":{"size":1},"ports":[{"port":1}]}`,
		`{"mode":"x","spec":{"size":1},"ports":[{"port":1,"protocol":"UDP"},{"port":2}]}`,
		`{"mode":"x","spec":{"size":1},"ports":[{"port":1,"protocol":"UDP"}]}`,
		`{"mode":"x","labels":{"a":{}}}`,
		`{"mode":"x","labels":{"a":{"weight":2},"b":{"weight":3}}}`,
		`{"mode":"x","spec":{"size":1,"name":"n"},"extra":{"size":null}}`,
	} {
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			t.Fatal(err)
		}
		want := applyDefaults(obj, st)
		got := !bytes.Equal(defaultRaw([]byte(raw), st), []byte(raw))
		if got != want {
			t.Errorf("%s: defaulted %v, applyDefaults changed it: %v", raw, got, want)
		}
	}
}

// BenchmarkDefaultRaw: serving a stored custom resource whose schema has
// defaults, all present (the common case: written with them).
func BenchmarkDefaultRaw(b *testing.B) {
	st := dialSchema(b)
	raw := []byte(`{"apiVersion":"example.com/v1","kind":"Dial","labels":{"a":{"weight":2}},"metadata":{"name":"d","namespace":"n",` +
		`"resourceVersion":"12","uid":"ccbf0abb-dd04-4834-828b-5613702f3470"},"mode":"x","ports":[{"port":1,"protocol":"UDP"},` +
		`{"port":2,"protocol":"TCP"}],"spec":{"name":"n","size":1}}`)
	b.ReportAllocs()
	for b.Loop() {
		if out := defaultRaw(raw, st); &out[0] != &raw[0] {
			b.Fatal("defaulted")
		}
	}
}
