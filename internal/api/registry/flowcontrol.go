package registry

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// flowcontrolKinds are the served kinds of flowcontrol.apiserver.k8s.io/v1:
// FlowSchemas and PriorityLevelConfigurations, stored and served with
// kube's defaults and status subresources so that the charts and tools
// that manage them work. litek8s does not schedule requests by them: its
// own in-flight limits (Limits) bound what a member takes on.
func flowcontrolKinds() []*Resource {
	return []*Resource{
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas", Singular: "flowschema",
			Kind: "FlowSchema", Status: true, HasGeneration: true,
			New: NewOf[flowcontrolv1.FlowSchema](), NewList: NewOf[flowcontrolv1.FlowSchemaList](),
			Normalize: defaultFlowSchema, Validate: validateFlowSchema},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations",
			Singular: "prioritylevelconfiguration", Kind: "PriorityLevelConfiguration", Status: true, HasGeneration: true,
			New:       NewOf[flowcontrolv1.PriorityLevelConfiguration](),
			NewList:   NewOf[flowcontrolv1.PriorityLevelConfigurationList](),
			Normalize: defaultPriorityLevelConfiguration, Validate: validatePriorityLevelConfiguration},
	}
}

// defaultFlowSchema is kube's SetDefaults_FlowSchemaSpec.
func defaultFlowSchema(obj runtime.Object) {
	fs := obj.(*flowcontrolv1.FlowSchema)
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = 1000
	}
}

// defaultPriorityLevelConfiguration is kube's defaulting of exempt and
// limited levels and their queuing.
func defaultPriorityLevelConfiguration(obj runtime.Object) {
	sp := &obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec
	if e := sp.Exempt; e != nil {
		e.NominalConcurrencyShares = defaultInt32(e.NominalConcurrencyShares, 0)
		e.LendablePercent = defaultInt32(e.LendablePercent, 0)
	}
	if l := sp.Limited; l != nil {
		l.NominalConcurrencyShares = defaultInt32(l.NominalConcurrencyShares, 30)
		l.LendablePercent = defaultInt32(l.LendablePercent, 0)
		if q := l.LimitResponse.Queuing; q != nil {
			if q.HandSize == 0 {
				q.HandSize = 8
			}
			if q.Queues == 0 {
				q.Queues = 64
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = 50
			}
		}
	}
}

// validateFlowSchema checks what kube's validation refuses most often: a
// schema without a priority level, a precedence out of range, a
// distinguisher of an unknown type.
func validateFlowSchema(obj, _ runtime.Object) field.ErrorList {
	fs := obj.(*flowcontrolv1.FlowSchema)
	sp := field.NewPath("spec")
	var errs field.ErrorList
	if fs.Spec.PriorityLevelConfiguration.Name == "" {
		errs = append(errs, field.Required(sp.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	if p := fs.Spec.MatchingPrecedence; p <= 0 || p > 10000 {
		errs = append(errs, field.Invalid(sp.Child("matchingPrecedence"), p, "must be between 1 and 10000 inclusively"))
	}
	if d := fs.Spec.DistinguisherMethod; d != nil && d.Type != flowcontrolv1.FlowDistinguisherMethodByUserType &&
		d.Type != flowcontrolv1.FlowDistinguisherMethodByNamespaceType {
		errs = append(errs, field.NotSupported(sp.Child("distinguisherMethod", "type"), d.Type,
			[]string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}))
	}
	return errs
}

// validatePriorityLevelConfiguration: the type names the one of exempt
// and limited that is set.
func validatePriorityLevelConfiguration(obj, _ runtime.Object) field.ErrorList {
	sp := &obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec
	p := field.NewPath("spec")
	var errs field.ErrorList
	switch sp.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if sp.Limited != nil {
			errs = append(errs, field.Forbidden(p.Child("limited"), "must be nil if the type is not Limited"))
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if sp.Limited == nil {
			errs = append(errs, field.Required(p.Child("limited"), "must not be empty when type is Limited"))
		} else if t := sp.Limited.LimitResponse.Type; t == flowcontrolv1.LimitResponseTypeQueue && sp.Limited.LimitResponse.Queuing == nil {
			errs = append(errs, field.Required(p.Child("limited", "limitResponse", "queuing"), "must not be empty if the type is Queue"))
		}
		if sp.Exempt != nil {
			errs = append(errs, field.Forbidden(p.Child("exempt"), "must be nil if the type is Limited"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), sp.Type,
			[]string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}))
	}
	return errs
}
