package simnode

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseTaints reads taints written as kubectl taint and the kubelet's
// --register-with-taints write them: "key=value:Effect" or "key:Effect",
// comma-separated (spaces around each allowed). An empty string is no
// taints. The result is checked as Validate checks Config.Taints.
func ParseTaints(s string) ([]corev1.Taint, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []corev1.Taint
	for _, spec := range strings.Split(s, ",") {
		spec = strings.TrimSpace(spec)
		kv, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("simnode: taint %q: want key=value:Effect or key:Effect", spec)
		}
		key, value, _ := strings.Cut(kv, "=")
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	if err := validateTaints(out); err != nil {
		return nil, err
	}
	return out, nil
}

// validateTaints checks each taint as kube's API validation does (a
// qualified key, a label value, a known effect) and that no key and effect
// appear twice.
func validateTaints(taints []corev1.Taint) error {
	seen := map[string]bool{}
	for _, t := range taints {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("simnode: taint key %q: %s", t.Key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
			return fmt.Errorf("simnode: taint %q value %q: %s", t.Key, t.Value, strings.Join(errs, "; "))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return fmt.Errorf("simnode: taint %q effect %q: want NoSchedule, PreferNoSchedule or NoExecute", t.Key, t.Effect)
		}
		if t.TimeAdded != nil && t.Effect != corev1.TaintEffectNoExecute {
			return fmt.Errorf("simnode: taint %q: timeAdded is only for NoExecute taints", t.Key)
		}
		k := t.Key + ":" + string(t.Effect)
		if seen[k] {
			return fmt.Errorf("simnode: taint %q with effect %s given twice", t.Key, t.Effect)
		}
		seen[k] = true
	}
	return nil
}
