package namespace

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conditions the namespace controller maintains while it deletes a
// namespace, worded as kube's (its status_condition_utils.go): each is
// False with an "ok" reason until something goes wrong.
var (
	conditionTypes = []corev1.NamespaceConditionType{
		corev1.NamespaceDeletionDiscoveryFailure,
		corev1.NamespaceDeletionGVParsingFailure,
		corev1.NamespaceDeletionContentFailure,
		corev1.NamespaceContentRemaining,
		corev1.NamespaceFinalizersRemaining,
	}
	okReasons = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "ResourcesDiscovered",
		corev1.NamespaceDeletionGVParsingFailure: "ParsedGroupVersions",
		corev1.NamespaceDeletionContentFailure:   "ContentDeleted",
		corev1.NamespaceContentRemaining:         "ContentRemoved",
		corev1.NamespaceFinalizersRemaining:      "ContentHasNoFinalizers",
	}
	okMessages = map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
		corev1.NamespaceDeletionGVParsingFailure: "All legacy kube types successfully parsed",
		corev1.NamespaceDeletionContentFailure:   "All content successfully deleted, may be waiting on finalization",
		corev1.NamespaceContentRemaining:         "All content successfully removed",
		corev1.NamespaceFinalizersRemaining:      "All content-preserving finalizers finished",
	}
)

// conditions are the failing conditions t and discoveryErr make; the
// others are set to their "ok" variant by updateConditions.
func (t *tally) conditions(discoveryErr error) []corev1.NamespaceCondition {
	var out []corev1.NamespaceCondition
	add := func(typ corev1.NamespaceConditionType, reason, msg string) {
		out = append(out, corev1.NamespaceCondition{Type: typ, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.Now(), Reason: reason, Message: msg})
	}
	if discoveryErr != nil {
		add(corev1.NamespaceDeletionDiscoveryFailure, "DiscoveryFailed", discoveryErr.Error())
	}
	if len(t.errs) > 0 {
		msgs := make([]string, len(t.errs))
		for i, e := range t.errs {
			msgs[i] = e.Error()
		}
		sort.Strings(msgs)
		add(corev1.NamespaceDeletionContentFailure, "ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(msgs), strings.Join(msgs, ", ")))
	}
	if len(t.remaining) > 0 {
		add(corev1.NamespaceContentRemaining, "SomeResourcesRemain", "Some resources are remaining: "+t.summary())
	}
	if len(t.finalizers) > 0 {
		var parts []string
		for f, n := range t.finalizers {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		add(corev1.NamespaceFinalizersRemaining, "SomeFinalizersRemain",
			"Some content in the namespace has finalizers remaining: "+strings.Join(parts, ", "))
	}
	return out
}

// updateConditions sets the controller's conditions in status from the
// failing ones (the others "ok") and reports whether anything changed; a
// condition's lastTransitionTime changes only with its status.
func updateConditions(status *corev1.NamespaceStatus, failing []corev1.NamespaceCondition) bool {
	changed := false
	for _, typ := range conditionTypes {
		want := findCondition(failing, typ)
		if want == nil {
			want = &corev1.NamespaceCondition{Type: typ, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now(),
				Reason: okReasons[typ], Message: okMessages[typ]}
		}
		old := findCondition(status.Conditions, typ)
		switch {
		case old == nil:
			status.Conditions = append(status.Conditions, *want)
			changed = true
		case old.Status != want.Status || old.Reason != want.Reason || old.Message != want.Message:
			if old.Status != want.Status {
				old.LastTransitionTime = metav1.Now()
			}
			old.Status, old.Reason, old.Message = want.Status, want.Reason, want.Message
			changed = true
		}
	}
	return changed
}

func findCondition(cs []corev1.NamespaceCondition, typ corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}
