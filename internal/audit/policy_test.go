package audit

import (
	"errors"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

func TestParsePolicyErrors(t *testing.T) {
	for _, c := range []struct{ name, policy, want string }{
		{"unknown field", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  verb: [get]\n", `unknown field "rules[0].verb"`},
		{"wrong kind", "apiVersion: audit.k8s.io/v1\nkind: Pod\nrules:\n- level: Metadata\n", `kind "Pod"`},
		{"v1beta1", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: Metadata\n", `apiVersion "audit.k8s.io/v1beta1"`},
		{"bad level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n", `rules[0].level: Unsupported value: "Everything"`},
		{"no level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- verbs: [get]\n", `rules[0].level: Required value`},
		{"bad stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Later]\nrules:\n- level: Metadata\n", `omitStages[0]: Invalid value: "Later"`},
		{"url and resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  nonResourceURLs: [/healthz]\n  resources: [{group: \"\"}]\n", "rules cannot apply to both regular resources and non-resource URLs"},
		{"url wildcard", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  nonResourceURLs: [/a*b]\n", "non-resource URL wildcards '*' must be the final character"},
		{"no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\n", "0 rules"},
		{"not yaml", "{", "audit: invalid policy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(c.policy))
			if err == nil || !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an ErrInvalidPolicy with %q", err, c.want)
			}
		})
	}
}

const matchPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: [system:kube-proxy]
  verbs: [watch]
  resources: [{group: "", resources: [endpoints, services]}]
- level: None
  userGroups: [system:nodes]
- level: None
  nonResourceURLs: [/healthz*, /version]
- level: RequestResponse
  omitStages: [ResponseStarted]
  omitManagedFields: false
  resources: [{group: "", resources: [pods/log, "configmaps"]}]
- level: Request
  resources: [{group: "", resources: ["*/status"]}, {group: apps, resources: ["deployments/*"]}]
- level: Metadata
  resources: [{group: "*", resources: [secrets], resourceNames: [top]}]
  namespaces: [kube-system]
- level: Request
  namespaces: [""]
- level: Metadata
  nonResourceURLs: ["*"]
`

func TestEvaluate(t *testing.T) {
	p, err := ParsePolicy([]byte(matchPolicy))
	if err != nil {
		t.Fatal(err)
	}
	res := func(user, verb, group, resource, sub, ns, name string, groups ...string) *Attributes {
		return &Attributes{User: user, Groups: groups, Verb: verb, ResourceRequest: true, APIGroup: group,
			Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	for _, c := range []struct {
		name  string
		a     *Attributes
		level auditv1.Level
	}{
		{"kube-proxy watches endpoints", res("system:kube-proxy", "watch", "", "endpoints", "", "", ""), auditv1.LevelNone},
		{"kube-proxy lists endpoints: next rules", res("system:kube-proxy", "list", "", "endpoints", "", "", ""), auditv1.LevelRequest},
		{"a node", res("system:node:n1", "get", "", "pods", "", "a", "p", "system:nodes"), auditv1.LevelNone},
		{"healthz prefix", &Attributes{User: "x", Verb: "get", Path: "/healthz/etcd"}, auditv1.LevelNone},
		{"version exact", &Attributes{User: "x", Verb: "get", Path: "/version"}, auditv1.LevelNone},
		{"version prefix is not exact", &Attributes{User: "x", Verb: "get", Path: "/versions"}, auditv1.LevelMetadata},
		{"pods/log", res("u", "get", "", "pods", "log", "a", "p"), auditv1.LevelRequestResponse},
		{"pods itself is not pods/log", res("u", "get", "", "pods", "", "a", "p"), auditv1.LevelNone},
		{"configmaps", res("u", "create", "", "configmaps", "", "a", ""), auditv1.LevelRequestResponse},
		{"*/status", res("u", "update", "", "pods", "status", "a", "p"), auditv1.LevelRequest},
		{"deployments/* matches deployments", res("u", "get", "apps", "deployments", "", "a", "d"), auditv1.LevelRequest},
		{"deployments/* matches deployments/scale", res("u", "get", "apps", "deployments", "scale", "a", "d"), auditv1.LevelRequest},
		{"other group is not core", res("u", "get", "batch", "configmaps", "", "a", "d"), auditv1.LevelNone},
		{"resourceNames and namespace", res("u", "get", "", "secrets", "", "kube-system", "top"), auditv1.LevelMetadata},
		{"other name", res("u", "get", "", "secrets", "", "kube-system", "other"), auditv1.LevelNone},
		{"cluster-scoped", res("u", "get", "", "nodes", "", "", "n1"), auditv1.LevelRequest},
		{"non-resource *", &Attributes{User: "x", Verb: "post", Path: "/anything"}, auditv1.LevelMetadata},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := p.Evaluate(c.a).Level; got != c.level {
				t.Errorf("level %q, want %q", got, c.level)
			}
		})
	}
	cm := p.Evaluate(res("u", "create", "", "configmaps", "", "a", ""))
	if !cm.Omits(auditv1.StageRequestReceived) || !cm.Omits(auditv1.StageResponseStarted) || cm.Omits(auditv1.StageResponseComplete) {
		t.Errorf("configmaps: omitted stages are the policy's and the rule's: %+v", cm)
	}
	if cm.OmitManagedFields {
		t.Error("configmaps: the rule's omitManagedFields: false wins over the policy's")
	}
	if st := p.Evaluate(res("u", "update", "", "pods", "status", "a", "p")); !st.OmitManagedFields || st.Omits(auditv1.StageResponseStarted) {
		t.Errorf("*/status: policy's omitManagedFields, only RequestReceived omitted: %+v", st)
	}
}
