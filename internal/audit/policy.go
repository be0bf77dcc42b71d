package audit

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/apis/audit/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Policy is a loaded audit.k8s.io/v1 Policy.
type Policy struct {
	rules []rule
	// dflt applies when no rule matches: kube's DefaultAuditLevel (None)
	// with the policy's omitStages and omitManagedFields.
	dflt RequestConfig
}

// rule is a PolicyRule with its stages to omit merged with the policy's
// (kube's NewPolicyRuleEvaluator unions them).
type rule struct {
	auditv1.PolicyRule
	cfg RequestConfig
}

// RequestConfig is what the policy decides for one request.
type RequestConfig struct {
	Level             auditv1.Level
	omit              stageSet
	OmitManagedFields bool
}

// Omits reports whether events of stage are left out.
func (c RequestConfig) Omits(stage auditv1.Stage) bool { return c.omit.has(stage) }

// stageSet is a set of the four stages.
type stageSet uint8

var stageBits = map[auditv1.Stage]stageSet{auditv1.StageRequestReceived: 1, auditv1.StageResponseStarted: 2,
	auditv1.StageResponseComplete: 4, auditv1.StagePanic: 8}

func (s stageSet) has(st auditv1.Stage) bool { return s&stageBits[st] != 0 }

func stagesOf(lists ...[]auditv1.Stage) stageSet {
	var s stageSet
	for _, l := range lists {
		for _, st := range l {
			s |= stageBits[st]
		}
	}
	return s
}

// levelOrder ranks the levels (kube's Level.Less).
var levelOrder = map[auditv1.Level]int{auditv1.LevelNone: 0, auditv1.LevelMetadata: 1,
	auditv1.LevelRequest: 2, auditv1.LevelRequestResponse: 3}

// AtLeast reports whether level l includes what level min logs.
func AtLeast(l, min auditv1.Level) bool { return levelOrder[l] >= levelOrder[min] }

// LoadPolicy reads and parses the policy file at path.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit: policy file: %w", err)
	}
	p, err := ParsePolicy(b)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return p, nil
}

// ParsePolicy decodes an audit.k8s.io/v1 Policy strictly (unknown or
// duplicate fields are errors, where kube falls back to a lenient decoding
// with a warning) and validates it as kube does.
func ParsePolicy(b []byte) (*Policy, error) {
	var pol auditv1.Policy
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPolicy, err)
	}
	strict, err := kjson.UnmarshalStrict(j, &pol, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPolicy, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%w: strict decoding error: %v", ErrInvalidPolicy, errors.Join(strict...))
	}
	if gvk := pol.GroupVersionKind(); gvk != auditv1.SchemeGroupVersion.WithKind("Policy") {
		return nil, fmt.Errorf("%w: apiVersion %q and kind %q: want apiVersion %q and kind \"Policy\"",
			ErrInvalidPolicy, pol.APIVersion, pol.Kind, auditv1.SchemeGroupVersion.String())
	}
	var internal auditinternal.Policy
	if err := auditv1.Convert_v1_Policy_To_audit_Policy(&pol, &internal, nil); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPolicy, err)
	}
	if errs := validation.ValidatePolicy(&internal); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPolicy, errs.ToAggregate())
	}
	if len(pol.Rules) == 0 {
		return nil, fmt.Errorf("%w: loaded illegal policy with 0 rules", ErrInvalidPolicy)
	}
	p := &Policy{dflt: RequestConfig{Level: auditv1.LevelNone, omit: stagesOf(pol.OmitStages),
		OmitManagedFields: pol.OmitManagedFields}}
	for _, r := range pol.Rules {
		omf := pol.OmitManagedFields
		if r.OmitManagedFields != nil {
			omf = *r.OmitManagedFields
		}
		p.rules = append(p.rules, rule{PolicyRule: r, cfg: RequestConfig{Level: r.Level,
			omit: stagesOf(pol.OmitStages, r.OmitStages), OmitManagedFields: omf}})
	}
	return p, nil
}

// Attributes are what a rule matches: the authenticated user (before
// impersonation, as kube's audit filter sees it), the verb, and the
// resource or the non-resource path.
type Attributes struct {
	User            string
	Groups          []string
	Verb            string
	ResourceRequest bool
	// APIGroup, APIVersion, Resource, Subresource, Namespace, Name: a
	// resource request's (kube's RequestInfo).
	APIGroup, APIVersion, Resource, Subresource, Namespace, Name string
	// Path is a non-resource request's.
	Path string
}

// GroupVersion is the request's API group and version.
func (a *Attributes) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: a.APIGroup, Version: a.APIVersion}
}

// Evaluate returns the configuration of the first rule a matches; none
// matching is level None.
func (p *Policy) Evaluate(a *Attributes) RequestConfig {
	for i := range p.rules {
		if p.rules[i].matches(a) {
			return p.rules[i].cfg
		}
	}
	return p.dflt
}

// matches is kube's ruleMatches: every field the rule sets must match.
func (r *rule) matches(a *Attributes) bool {
	if len(r.Users) > 0 && !slices.Contains(r.Users, a.User) {
		return false
	}
	if len(r.UserGroups) > 0 && !slices.ContainsFunc(a.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
		return false
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return r.matchesResource(a)
	}
	if len(r.NonResourceURLs) > 0 {
		return !a.ResourceRequest && slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(a.Path, spec) })
	}
	return true
}

// pathMatches: "*", the exact path, or a prefix ending in "*".
func pathMatches(path, spec string) bool {
	if spec == "*" || spec == path {
		return true
	}
	prefix, ok := strings.CutSuffix(spec, "*")
	return ok && strings.HasPrefix(path, strings.TrimRight(prefix, "*"))
}

// matchesResource matches namespaces (cluster-scoped resources are "")
// and group resources: "res", "res/sub", "*", "*/sub", "res/*", with
// resourceNames when given.
func (r *rule) matchesResource(a *Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined = a.Resource + "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && a.Subresource == res[2:]:
				return true
			case strings.HasSuffix(res, "/*") && a.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}
