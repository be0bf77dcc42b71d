package policy_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
)

// replicaLimitCRD is the param kind of kube's documentation.
const replicaLimitCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: replicalimits.rules.example.com
spec:
  group: rules.example.com
  scope: Namespaced
  names: {plural: replicalimits, singular: replicalimit, kind: ReplicaLimit}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          maxReplicas: {type: integer}
`

// paramPolicy is kube's documented policy with a ReplicaLimit param.
const paramPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "replicalimit-policy.example.com"
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: rules.example.com/v1
    kind: ReplicaLimit
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= params.maxReplicas"
      messageExpression: "'object.spec.replicas must be no greater than ' + string(params.maxReplicas)"
      reason: Invalid
`

func replicaLimit(ns, name string, max int, labels string) string {
	return `
apiVersion: rules.example.com/v1
kind: ReplicaLimit
metadata:
  name: "` + name + `"
  namespace: "` + ns + `"
  labels: {` + labels + `}
maxReplicas: ` + itoa(max)
}

func itoa(i int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// TestParams: kube's ReplicaLimit example with paramRef by name and by
// selector, and parameterNotFoundAction Deny and Allow.
func TestParams(t *testing.T) {
	e := newEnv(t, "default", "prod")
	e.create(t, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", replicaLimitCRD)
	e.create(t, policiesPath, paramPolicy)
	e.create(t, bindingsPath, binding("replicalimit-binding-test.example.com", "replicalimit-policy.example.com", "[Deny]", `
  paramRef:
    name: "replica-limit-test.example.com"
    namespace: "default"
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: default
`))
	// the param does not exist yet: parameterNotFoundAction Deny
	r := e.admit(t, deployment("default", "d", 1, nil), alice)
	wantDenied(t, r, 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")

	e.waitCRD(t, "/apis/rules.example.com/v1/namespaces/default/replicalimits")
	e.create(t, "/apis/rules.example.com/v1/namespaces/default/replicalimits", replicaLimit("default", "replica-limit-test.example.com", 3, ""))
	r = e.admit(t, deployment("default", "d", 4, nil), alice)
	wantDenied(t, r, 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: object.spec.replicas must be no greater than 3")
	wantAdmitted(t, e.admit(t, deployment("default", "d", 3, nil), alice))

	// by selector, in the request's namespace, every matching param applies;
	// parameterNotFoundAction Allow admits when none matches
	e.create(t, bindingsPath, binding("replicalimit-binding-prod", "replicalimit-policy.example.com", "[Deny]", `
  paramRef:
    selector:
      matchLabels:
        tier: prod
    parameterNotFoundAction: Allow
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: prod
`))
	wantAdmitted(t, e.admit(t, deployment("prod", "d", 50, nil), alice))
	e.create(t, "/apis/rules.example.com/v1/namespaces/prod/replicalimits", replicaLimit("prod", "loose", 20, "tier: prod"))
	e.create(t, "/apis/rules.example.com/v1/namespaces/prod/replicalimits", replicaLimit("prod", "other", 1, "tier: dev"))
	r = e.admit(t, deployment("prod", "d", 21, nil), alice)
	wantDenied(t, r, 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-prod' denied request: object.spec.replicas must be no greater than 20")
	wantAdmitted(t, e.admit(t, deployment("prod", "d", 20, nil), alice)) // "other" is not selected
	e.create(t, "/apis/rules.example.com/v1/namespaces/prod/replicalimits", replicaLimit("prod", "strict", 10, "tier: prod"))
	r = e.admit(t, deployment("prod", "d", 15, nil), alice)
	wantDenied(t, r, 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-prod' denied request: object.spec.replicas must be no greater than 10")
}

// TestConfigMapParams: a ConfigMap as the param kind (cluster-scoped
// policy, namespaced param in the request's namespace).
func TestConfigMapParams(t *testing.T) {
	e := newEnv(t, "default")
	e.create(t, policiesPath, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: cm-limit}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'at most ' + params.data.maxReplicas + ' replicas, not ' + string(object.spec.replicas)"
    reason: Forbidden
`)
	e.create(t, bindingsPath, binding("cm-limit", "cm-limit", "[Deny]", `
  paramRef: {name: limits, parameterNotFoundAction: Allow}
`))
	wantAdmitted(t, e.admit(t, deployment("default", "d", 9, nil), alice)) // Allow: no ConfigMap yet
	e.create(t, "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"limits"},"data":{"maxReplicas":"2"}}`)
	r := e.admit(t, deployment("default", "d", 9, nil), alice)
	// reason Forbidden: 403, as kube maps a validation's reason to its code
	wantDenied(t, r, 403, metav1.StatusReasonForbidden, "d",
		"ValidatingAdmissionPolicy 'cm-limit' with binding 'cm-limit' denied request: at most 2 replicas, not 9")
}

// TestMatchConditionsAndVariables: kube's documented matchConditions
// (leave out a user group) and a variable used by a validation.
func TestMatchConditionsAndVariables(t *testing.T) {
	e := newEnv(t, "default", "kube-system")
	e.create(t, policiesPath, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: name-label}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["*"]
      apiVersions: ["*"]
      operations: ["CREATE", "UPDATE"]
      resources: ["*"]
  matchConditions:
  - name: 'exclude-kubelet-requests'
    expression: '!("system:nodes" in request.userInfo.groups)'
  - name: 'exclude-kube-system'
    expression: 'request.namespace != "kube-system"'
  variables:
  - name: appName
    expression: "'app.kubernetes.io/name' in object.metadata.labels ? object.metadata.labels['app.kubernetes.io/name'] : ''"
  validations:
  - expression: "variables.appName == object.metadata.name"
    messageExpression: "'app.kubernetes.io/name must be ' + object.metadata.name + ', not \"' + variables.appName + '\"'"
`)
	e.create(t, bindingsPath, binding("name-label", "name-label", "[Deny]", ""))
	r := e.admit(t, deployment("default", "web", 1, map[string]string{"app.kubernetes.io/name": "api"}), alice)
	wantDenied(t, r, 422, metav1.StatusReasonInvalid, "web",
		`ValidatingAdmissionPolicy 'name-label' with binding 'name-label' denied request: app.kubernetes.io/name must be web, not "api"`)
	wantAdmitted(t, e.admit(t, deployment("default", "web", 1, map[string]string{"app.kubernetes.io/name": "web"}), alice))
	node := &user.DefaultInfo{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
	wantAdmitted(t, e.admit(t, deployment("default", "web", 1, nil), node))      // matchCondition leaves nodes out
	wantAdmitted(t, e.admit(t, deployment("kube-system", "web", 1, nil), alice)) // and kube-system
	wantDenied(t, e.admit(t, deployment("default", "web", 1, map[string]string{"tier": "x"}), alice), 422, metav1.StatusReasonInvalid, "web",
		`ValidatingAdmissionPolicy 'name-label' with binding 'name-label' denied request: app.kubernetes.io/name must be web, not ""`)
}

// TestFailurePolicy: an expression that fails at run time (a missing
// map key) refuses with Fail and admits with Ignore.
func TestFailurePolicy(t *testing.T) {
	e := newEnv(t, "default")
	pol := func(name, fp string) string {
		return `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: ` + name + `}
spec:
  failurePolicy: ` + fp + `
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.metadata.labels['team'] != ''"
`
	}
	e.create(t, policiesPath, pol("ignore", "Ignore"))
	e.create(t, bindingsPath, binding("ignore", "ignore", "[Deny]", ""))
	wantAdmitted(t, e.admit(t, deployment("default", "d", 1, map[string]string{"a": "b"}), alice))
	e.create(t, policiesPath, pol("fail", "Fail"))
	e.create(t, bindingsPath, binding("fail", "fail", "[Deny]", ""))
	wantDenied(t, e.admit(t, deployment("default", "d", 1, map[string]string{"a": "b"}), alice), 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'fail' with binding 'fail' denied request: expression 'object.metadata.labels['team'] != ''' resulted in error: no such key: team")
	wantAdmitted(t, e.admit(t, deployment("default", "d", 1, map[string]string{"team": "x"}), alice))
}

// TestAuthorizer: CEL's `authorizer` asks the API's own authorizers
// (system:masters, RBAC) on behalf of the request's user.
func TestAuthorizer(t *testing.T) {
	e := newEnv(t, "default")
	e.create(t, policiesPath, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: secret-readers}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()"
    message: "only those who may read the namespace's secrets may create deployments"
`)
	e.create(t, bindingsPath, binding("secret-readers", "secret-readers", "[Deny]", ""))
	admin := &user.DefaultInfo{Name: "root", Groups: []string{"system:masters", "system:authenticated"}}
	wantAdmitted(t, e.admit(t, deployment("default", "d", 1, nil), admin))
	wantDenied(t, e.admit(t, deployment("default", "d", 1, nil), alice), 422, metav1.StatusReasonInvalid, "d",
		"ValidatingAdmissionPolicy 'secret-readers' with binding 'secret-readers' denied request: only those who may read the namespace's secrets may create deployments")
	e.create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
		`{"metadata":{"name":"read-secrets"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]}`)
	e.create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
		`{"metadata":{"name":"alice"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"read-secrets"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}]}`)
	wantAdmitted(t, e.admit(t, deployment("default", "d", 1, nil), alice))
}
