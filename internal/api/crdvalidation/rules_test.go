package crdvalidation

import (
	"encoding/json"
	"strings"
	"testing"

	apiextinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// structural returns the structural schema of a CRD version's
// openAPIV3Schema given as JSON.
func structural(t testing.TB, schema string) *structuralschema.Structural {
	t.Helper()
	var v1 apiextv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(schema), &v1); err != nil {
		t.Fatal(err)
	}
	var in apiextinternal.JSONSchemaProps
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &in, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// crdOf returns a CRD whose only version has the schema schema.
func crdOf(t testing.TB, schema string) *apiextv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextv1.CustomResourceDefinition{}
	raw := `{"metadata":{"name":"ks.example.com"},"spec":{"group":"example.com","scope":"Namespaced",
	 "names":{"plural":"ks","kind":"K","singular":"k","listKind":"KList"},
	 "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":` + schema + `}}]},
	 "status":{"storedVersions":["v1"]}}`
	if err := json.Unmarshal([]byte(raw), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// pairsSchema: a rule whose estimated cost passes kube's CRD checks (1000
// items at most) but whose actual cost on 1000 items exceeds kube's
// per-call limit.
const pairsSchema = `{"type":"object","properties":{"spec":{"type":"object","properties":{
 "ids":{"type":"array","maxItems":1000,"items":{"type":"integer"}}},
 "x-kubernetes-validations":[{"rule":"self.ids.all(a, self.ids.all(b, a == b || a != b))","message":"never"}]}}}`

// A rule that costs more than kube's per-call limit when it runs is
// refused with kube's message, though the CRD was accepted.
func TestRuntimeCostLimit(t *testing.T) {
	if errs := CRDErrors(t.Context(), crdOf(t, pairsSchema), nil); len(errs) != 0 {
		t.Fatalf("the CRD must be accepted: %v", errs)
	}
	r := Compile(structural(t, pairsSchema))
	ids := func(n int) map[string]any {
		l := make([]any, n)
		for i := range l {
			l[i] = int64(i)
		}
		return map[string]any{"apiVersion": "example.com/v1", "kind": "K", "metadata": map[string]any{"name": "a"},
			"spec": map[string]any{"ids": l}}
	}
	if errs := r.Validate(t.Context(), ids(10), nil); len(errs) != 0 {
		t.Errorf("10 items: %v", errs)
	}
	errs := r.Validate(t.Context(), ids(1000), nil)
	const want = `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: never`
	if errs.ToAggregate() == nil || errs.ToAggregate().Error() != want {
		t.Errorf("1000 items: got %v\nwant %s", errs.ToAggregate(), want)
	}
}

// Transition rules run on updates with an old value only; optionalOldSelf
// ones also on create; ratcheting keeps unchanged invalid values.
func TestValidateOldSelf(t *testing.T) {
	r := Compile(structural(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
	 "n":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= oldSelf","message":"n may not decrease"}]},
	 "m":{"type":"integer","x-kubernetes-validations":[{"rule":"oldSelf.hasValue() || self < 5","optionalOldSelf":true,"message":"new m below 5"}]},
	 "k":{"type":"integer","x-kubernetes-validations":[{"rule":"self != 7","message":"not 7"}]}}}}}`))
	obj := func(spec string) map[string]any {
		var o map[string]any // integers as int64, as the API decodes them
		if err := utiljson.Unmarshal([]byte(`{"spec":`+spec+`}`), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, c := range []struct {
		obj, old string
		want     string
	}{
		{`{"n":1}`, "", ""},
		{`{"n":1}`, `{"n":2}`, "spec.n: Invalid value: 1: n may not decrease"},
		{`{"n":3}`, `{"n":2}`, ""},
		{`{"m":9}`, "", "spec.m: Invalid value: 9: new m below 5"},
		{`{"m":9}`, `{"m":1}`, ""},
		{`{"k":7}`, "", "spec.k: Invalid value: 7: not 7"},
		{`{"k":7,"n":2}`, `{"k":7,"n":1}`, ""}, // k unchanged: ratcheted
		{`{"k":7}`, `{"k":6}`, "spec.k: Invalid value: 7: not 7"},
	} {
		var old map[string]any
		if c.old != "" {
			old = obj(c.old)
		}
		got := ""
		if agg := r.Validate(t.Context(), obj(c.obj), old).ToAggregate(); agg != nil {
			got = agg.Error()
		}
		if got != c.want {
			t.Errorf("%s over %q: got %q, want %q", c.obj, c.old, got, c.want)
		}
	}
}

// The compiler compiles a CRD version once per generation and forgets
// the versions a rebuild no longer serves.
func TestCompilerReuse(t *testing.T) {
	s := structural(t, pairsSchema)
	var c Compiler
	k := Key{UID: "u", Generation: 1, Version: "v1"}
	first := c.Rules(k, s)
	if first == nil || c.Rules(k, s) != first {
		t.Fatal("the same key must give the same rules within a rebuild")
	}
	c.Done()
	if c.Rules(k, s) != first {
		t.Error("the next rebuild must reuse the rules")
	}
	next := c.Rules(Key{UID: "u", Generation: 2, Version: "v1"}, s)
	if next == first || next == nil {
		t.Error("a new generation must be compiled anew")
	}
	c.Done()
	c.Done() // a rebuild that served nothing
	if c.Rules(k, s) == first {
		t.Error("rules no longer served must be forgotten")
	}
	if Compile(structural(t, `{"type":"object","properties":{"spec":{"type":"object"}}}`)) != nil {
		t.Error("a schema without rules must compile to nil")
	}
}

// CRDErrors keeps kube's errors about rules only: other problems of the
// CRD are the caller's, and a CRD without rules is not validated at all.
func TestCRDErrorsOnlyRules(t *testing.T) {
	noRules := crdOf(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer"}}}}}`)
	noRules.Spec.Names.Plural = "" // kube would refuse it; not a rule error
	if errs := CRDErrors(t.Context(), noRules, nil); len(errs) != 0 {
		t.Errorf("no rules: %v", errs)
	}
	for rule, want := range map[string]string{
		`{"rule":"self.a > 1"}`: "",
		`{"rule":""}`:           "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified",
		`{"rule":"self.a > 1","reason":"Nope"}`: `spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "Nope": ` +
			`supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
		`{"rule":"self.a > 1","fieldPath":".b"}`:       `spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].fieldPath: Invalid value: ".b": must be a valid path`,
		`{"rule":"self.a > 1","optionalOldSelf":true}`: "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
		`{"rule":"self.a","messageExpression":"1"}`:    "must evaluate to a bool", // (and the messageExpression to a string)
	} {
		crd := crdOf(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"integer"}},
		 "x-kubernetes-validations":[`+rule+`]}}}`)
		crd.Spec.Names.Plural = ""
		got := ""
		if agg := CRDErrors(t.Context(), crd, nil).ToAggregate(); agg != nil {
			got = agg.Error()
		}
		if !strings.Contains(got, want) || (want == "" && got != "") {
			t.Errorf("%s: got %q, want %q", rule, got, want)
		}
	}
}
