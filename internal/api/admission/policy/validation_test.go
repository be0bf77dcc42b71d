package policy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPolicyObjectValidation: kube refuses a policy or binding it cannot
// use, with its messages (the expected errors are those of kube's own
// validation tests), and stores nothing.
func TestPolicyObjectValidation(t *testing.T) {
	e := newEnv(t, "default")
	pol := func(spec string) string {
		return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bad}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
` + spec
	}
	cases := []struct {
		name, path, body, want string
	}{
		{"syntax", policiesPath, pol(`
  validations:
  - expression: "object.x in [1, 2, "
`), `spec.validations[0].expression: Invalid value: "object.x in [1, 2, ": compilation failed: ERROR: <input>:1:20: Syntax error: missing ']' at '<EOF>'`},
		{"messageExpression", policiesPath, pol(`
  validations:
  - expression: "true"
    messageExpression: "object.x in [1, 2, "
`), `spec.validations[0].messageExpression: Invalid value: "object.x in [1, 2, ": compilation failed: ERROR: <input>:1:20: Syntax error: missing ']' at '<EOF>'`},
		{"params without paramKind", policiesPath, pol(`
  validations:
  - expression: "params.x < 2"
`), `undeclared reference to 'params'`},
		{"variable type", policiesPath, pol(`
  variables:
  - name: foo
    expression: "114 + '514'"
  validations:
  - expression: "true"
`), `spec.variables[0].expression: Invalid value: "114 + '514'": compilation failed: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(int, string)'`},
		{"no validations", policiesPath, pol(""),
			`spec.validations: Required value: validations or auditAnnotations must contain at least one item`},
		{"Deny and Warn", bindingsPath, binding("b", "p", "[Deny, Warn]", ""),
			`spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn`},
		{"no action", bindingsPath, binding("b", "p", "[]", ""),
			`spec.validationActions: Required value: at least one validation action is required`},
		{"paramRef", bindingsPath, binding("b", "p", "[Deny]", `
  paramRef: {parameterNotFoundAction: Deny}
`), `spec.paramRef: Required value: one of name or selector must be specified`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, e.url+c.path, strings.NewReader(string(js)))
			req.Header.Set("Authorization", "Bearer t")
			req.Header.Set("Content-Type", "application/json")
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), `"reason":"Invalid"`) ||
				!strings.Contains(string(b), jsonEscape(c.want)) {
				t.Fatalf("%d %s\nwant 422 Invalid with %s", resp.StatusCode, b, c.want)
			}
		})
	}
	// nothing was stored
	for _, p := range []string{policiesPath + "/bad", bindingsPath + "/b"} {
		req, _ := http.NewRequest(http.MethodGet, e.url+p, nil)
		req.Header.Set("Authorization", "Bearer t")
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
	// a valid one is stored (defaults filled in)
	e.create(t, policiesPath, demoPolicy)
	e.create(t, bindingsPath, binding("ok", "demo-policy.example.com", "[Warn, Audit]", ""))
}

func jsonEscape(s string) string {
	return strings.NewReplacer(`"`, `\"`, `<`, `\u003c`, `>`, `\u003e`).Replace(s)
}
