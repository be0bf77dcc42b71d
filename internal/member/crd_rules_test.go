package member_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// rulesClient sends raw requests to the members of a cluster.
type rulesClient struct {
	c *membertest.Cluster
}

func (rc rulesClient) do(t *testing.T, i int, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, rc.c.URL(i)+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+rc.c.Token())
	switch method {
	case "PATCH":
		req.Header.Set("Content-Type", "application/merge-patch+json")
	default:
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Transport: rc.c.Transport(i)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func (rc rulesClient) must(t *testing.T, i int, method, path, body string) string {
	t.Helper()
	code, b := rc.do(t, i, method, path, body)
	if code >= 300 {
		t.Fatalf("%s %s on member %d: %d %s", method, path, i, code, b)
	}
	return b
}

// invalidStatus is what a 422 says: its message and causes.
type invalidStatus struct {
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Details struct {
		Causes []struct {
			Reason, Message, Field string
		} `json:"causes"`
	} `json:"details"`
}

// refused checks that the write answers 422 Invalid with exactly the
// message want and the cause (reason, field) of each of causes.
func (rc rulesClient) refused(t *testing.T, i int, method, path, body, want string, causes ...string) {
	t.Helper()
	code, b := rc.do(t, i, method, path, body)
	var st invalidStatus
	if err := json.Unmarshal([]byte(b), &st); err != nil || code != 422 || st.Reason != "Invalid" {
		t.Errorf("%s %s on member %d: want 422 Invalid, got %d %s", method, path, i, code, b)
		return
	}
	if st.Message != want {
		t.Errorf("%s %s on member %d:\n got message %s\nwant message %s", method, path, i, st.Message, want)
	}
	var got []string
	for _, c := range st.Details.Causes {
		got = append(got, c.Reason+" "+c.Field)
	}
	if strings.Join(got, ",") != strings.Join(causes, ",") {
		t.Errorf("%s %s on member %d: causes %q, want %q", method, path, i, got, causes)
	}
}

// gizmoCRD has x-kubernetes-validations of every kind kube supports: rules
// on spec with a message, a messageExpression, a reason and a fieldPath, a
// rule on list items (a map list) and on a map, a transition rule, an
// optionalOldSelf rule, and a rule on status (a subresource).
const gizmoCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"gizmos.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gizmos","kind":"Gizmo"},
  "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
   "schema":{"openAPIV3Schema":{"type":"object","properties":{
    "spec":{"type":"object",
     "x-kubernetes-validations":[
      {"rule":"self.minReplicas <= self.maxReplicas","message":"minReplicas must not exceed maxReplicas"},
      {"rule":"self.maxReplicas <= 100","messageExpression":"self.maxReplicas > 1000 ? 'maxReplicas is far above 100' : 'maxReplicas must be at most 100'"},
      {"rule":"!has(self.mode) || self.mode != 'legacy'","reason":"FieldValueForbidden","fieldPath":".mode","message":"legacy mode is no longer supported"}],
     "properties":{
      "minReplicas":{"type":"integer"},
      "maxReplicas":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= oldSelf","message":"maxReplicas may not decrease"}]},
      "mode":{"type":"string"},
      "tier":{"type":"string","maxLength":16,"x-kubernetes-validations":[
       {"rule":"oldSelf.hasValue() || self != 'gold'","optionalOldSelf":true,"message":"a new tier may not be gold"}]},
      "ports":{"type":"array","maxItems":16,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
       "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":16},"port":{"type":"integer"}},
        "x-kubernetes-validations":[{"rule":"self.port > 0 && self.port < 65536","message":"port must be between 1 and 65535"}]}},
      "labels":{"type":"object","maxProperties":16,"additionalProperties":{"type":"string","maxLength":63},
       "x-kubernetes-validations":[{"rule":"self.all(k, k.startsWith('app.'))","message":"label keys must start with app."}]}}},
    "status":{"type":"object","properties":{"ready":{"type":"integer"}},
     "x-kubernetes-validations":[{"rule":"self.ready >= 0","message":"ready must not be negative"}]}}}}}]}}`

// CRD validation rules (x-kubernetes-validations) through the leader and
// a follower: bad objects are refused with kube's messages and field
// paths (apiextensions' own validator), good ones stored, transition
// rules apply to updates only, status writes are checked against the
// status rules, unchanged invalid values ratchet, and a CRD whose rule
// does not compile or is estimated too expensive is refused and not
// stored.
func TestCRDValidationRules(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	rc := rulesClient{c: c}
	leader, follower := c.WaitLeader(), c.Follower()
	rc.must(t, follower, "POST", "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"rules"}}`)
	rc.must(t, follower, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gizmoCRD)
	const base = "/apis/example.com/v1/namespaces/rules/gizmos"
	gizmo := func(name, spec string) string {
		return `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
	}
	for _, i := range []int{leader, follower} {
		t.Run(fmt.Sprintf("member%d", i), func(t *testing.T) {
			membertest.Eventually(t, 10*time.Second, func() error { // the follower serves the CRD once it applied it
				if code, b := rc.do(t, i, "GET", base, ""); code != 200 {
					return fmt.Errorf("%d %s", code, b)
				}
				return nil
			})
			refused := func(spec, want string, causes ...string) {
				t.Helper()
				rc.refused(t, i, "POST", base, gizmo("bad", spec), `Gizmo.example.com "bad" is invalid: `+want, causes...)
			}
			refused(`{"minReplicas":5,"maxReplicas":3}`,
				`spec: Invalid value: minReplicas must not exceed maxReplicas`, "FieldValueInvalid spec")
			refused(`{"minReplicas":1,"maxReplicas":300}`,
				`spec: Invalid value: maxReplicas must be at most 100`, "FieldValueInvalid spec")
			refused(`{"minReplicas":1,"maxReplicas":3000}`,
				`spec: Invalid value: maxReplicas is far above 100`, "FieldValueInvalid spec")
			refused(`{"minReplicas":1,"maxReplicas":3,"mode":"legacy"}`,
				`spec.mode: Forbidden: legacy mode is no longer supported`, "FieldValueForbidden spec.mode")
			refused(`{"minReplicas":1,"maxReplicas":3,"ports":[{"name":"a","port":80},{"name":"b","port":70000}]}`,
				`spec.ports[1]: Invalid value: port must be between 1 and 65535`, "FieldValueInvalid spec.ports[1]")
			refused(`{"minReplicas":1,"maxReplicas":3,"labels":{"app.x":"1","team":"2"}}`,
				`spec.labels: Invalid value: label keys must start with app.`, "FieldValueInvalid spec.labels")
			refused(`{"minReplicas":1,"maxReplicas":3,"tier":"gold"}`, // optionalOldSelf: evaluated on create
				`spec.tier: Invalid value: "gold": a new tier may not be gold`, "FieldValueInvalid spec.tier")
			refused(`{"minReplicas":9,"maxReplicas":3,"mode":"legacy"}`, `[spec: Invalid value: minReplicas must not exceed maxReplicas, `+
				`spec.mode: Forbidden: legacy mode is no longer supported]`, "FieldValueInvalid spec", "FieldValueForbidden spec.mode")
			// a schema error that blocks the rules: kube says they were not checked
			refused(`{"minReplicas":"many","maxReplicas":3}`, `[spec.minReplicas: Invalid value: "string": spec.minReplicas in body must be of type integer: "string", `+
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
				"FieldValueTypeInvalid spec.minReplicas", "FieldValueInvalid <nil>")

			name := fmt.Sprintf("g%d", i)
			rc.must(t, i, "POST", base, gizmo(name, `{"minReplicas":1,"maxReplicas":10,"tier":"silver","ports":[{"name":"http","port":80}],"labels":{"app.name":"g"}}`))
			// transition rule: maxReplicas may grow, not shrink
			rc.must(t, i, "PATCH", base+"/"+name, `{"spec":{"maxReplicas":20}}`)
			rc.refused(t, i, "PATCH", base+"/"+name, `{"spec":{"maxReplicas":15}}`,
				`Gizmo.example.com "`+name+`" is invalid: spec.maxReplicas: Invalid value: 15: maxReplicas may not decrease`, "FieldValueInvalid spec.maxReplicas")
			// optionalOldSelf: an existing tier may become gold
			rc.must(t, i, "PATCH", base+"/"+name, `{"spec":{"tier":"gold"}}`)
			// status: its rules apply to /status writes
			rc.refused(t, i, "PATCH", base+"/"+name+"/status", `{"status":{"ready":-1}}`,
				`Gizmo.example.com "`+name+`" is invalid: status: Invalid value: ready must not be negative`, "FieldValueInvalid status")
			rc.must(t, i, "PATCH", base+"/"+name+"/status", `{"status":{"ready":2}}`)
			got := rc.must(t, i, "GET", base+"/"+name, "")
			for _, want := range []string{`"maxReplicas":20`, `"tier":"gold"`, `"status":{"ready":2}`} {
				if !strings.Contains(got, want) {
					t.Errorf("stored %s: want %s", got, want)
				}
			}
		})
	}
	if code, b := rc.do(t, leader, "GET", base+"/bad", ""); code != 404 {
		t.Errorf("a refused object was stored: %d %s", code, b)
	}

	t.Run("ratcheting", func(t *testing.T) {
		// A rule added later does not refuse the unchanged values of old
		// objects (CRDValidationRatcheting); a changed value is checked.
		name := fmt.Sprintf("g%d", leader)
		stricter := strings.Replace(gizmoCRD, `"minReplicas":{"type":"integer"}`,
			`"minReplicas":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= 2","message":"minReplicas must be at least 2"}]}`, 1)
		cur := rc.must(t, follower, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.example.com", "")
		var meta struct {
			Metadata struct{ ResourceVersion string } `json:"metadata"`
		}
		json.Unmarshal([]byte(cur), &meta)
		rc.must(t, follower, "PUT", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.example.com",
			strings.Replace(stricter, `"name":"gizmos.example.com"`, `"name":"gizmos.example.com","resourceVersion":"`+meta.Metadata.ResourceVersion+`"`, 1))
		membertest.Eventually(t, 10*time.Second, func() error {
			code, b := rc.do(t, leader, "POST", base, gizmo("strict", `{"minReplicas":1,"maxReplicas":3}`))
			if code != 422 || !strings.Contains(b, "minReplicas must be at least 2") {
				return fmt.Errorf("the new rule is not applied yet: %d %s", code, b)
			}
			return nil
		})
		for _, i := range []int{leader, follower} {
			rc.must(t, i, "PATCH", base+"/"+name, fmt.Sprintf(`{"spec":{"maxReplicas":%d}}`, 30+i)) // minReplicas 1 unchanged
			rc.refused(t, i, "PATCH", base+"/"+name, `{"spec":{"minReplicas":0}}`,
				`Gizmo.example.com "`+name+`" is invalid: spec.minReplicas: Invalid value: 0: minReplicas must be at least 2`, "FieldValueInvalid spec.minReplicas")
		}
	})

	t.Run("refusedCRDs", func(t *testing.T) {
		crd := func(name, prop, rule string) string {
			return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"` + name + `s.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"` + name + `s","kind":"K` + name + `"},
  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","properties":{` + prop + `},"x-kubernetes-validations":[{"rule":` + rule + `}]}}}}}]}}`
		}
		const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
		for _, i := range []int{leader, follower} {
			rc.refused(t, i, "POST", crds, crd("broken", `"a":{"type":"integer"}`, `"self.b > 1"`),
				`CustomResourceDefinition.apiextensions.k8s.io "brokens.example.com" is invalid: `+
					`spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: `+
					`{"Rule":"self.b \u003e 1","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: `+
					`compilation failed: ERROR: <input>:1:5: undefined field 'b'
 | self.b > 1
 | ....^`, "FieldValueInvalid spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")
			rc.refused(t, i, "POST", crds, crd("costly", `"lists":{"type":"array","items":{"type":"array","items":{"type":"string"}}}`,
				`"self.lists.all(a, self.lists.all(b, a.all(x, b.exists(y, x == y))))"`),
				`CustomResourceDefinition.apiextensions.k8s.io "costlys.example.com" is invalid: [`+
					`spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x `+
					`(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared), `+
					`spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema, `+
					`spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x `+
					`(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)]`,
				"FieldValueForbidden spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
				"FieldValueForbidden spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
				"FieldValueForbidden spec.validation.openAPIV3Schema")
			for _, n := range []string{"brokens", "costlys"} {
				if code, _ := rc.do(t, i, "GET", crds+"/"+n+".example.com", ""); code != 404 {
					t.Errorf("refused CRD %s stored: GET answered %d", n, code)
				}
			}
			// an update adding a broken rule is refused and changes nothing
			code, b := rc.do(t, i, "PATCH", crds+"/gizmos.example.com", `{"spec":{"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-validations":[{"rule":"self.nope == 1"}]}}}]}}`)
			if code != 422 || !strings.Contains(b, `undefined field 'nope'`) {
				t.Errorf("update with a broken rule: want 422, got %d %s", code, b)
			}
		}
		if got := rc.must(t, leader, "GET", crds+"/gizmos.example.com", ""); strings.Contains(got, "nope") {
			t.Errorf("a refused CRD update was stored: %s", got)
		}
	})
	c.SameObjects(t.Context(), base, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
}
