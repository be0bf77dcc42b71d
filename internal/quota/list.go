package quota

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Add returns a + b (a new list).
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a)+len(b))
	for k, v := range a {
		out[k] = v.DeepCopy()
	}
	for k, v := range b {
		q := out[k].DeepCopy()
		q.Add(v)
		out[k] = q
	}
	return out
}

// SubtractNonNegative returns a - b, each value at least 0 (kube's
// SubtractWithNonNegativeResult): an update is charged its growth only.
func SubtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a))
	zero := resource.Quantity{}
	for k, v := range a {
		q := v.DeepCopy()
		if o, ok := b[k]; ok {
			q.Sub(o)
		}
		if q.Cmp(zero) < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		out[k] = q
	}
	return out
}

// Mask returns the entries of l named in names.
func Mask(l corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := make(corev1.ResourceList, len(names))
	for _, n := range names {
		if v, ok := l[n]; ok {
			out[n] = v.DeepCopy()
		}
	}
	return out
}

// RemoveZeros returns l without its zero values.
func RemoveZeros(l corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(l))
	for k, v := range l {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// Names returns the names of l, sorted.
func Names(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Exceeded returns the names of a whose value is above b's (names b has
// not are not limited), sorted; none when a fits.
func Exceeded(a, b corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for k, v := range a {
		if h, ok := b[k]; ok && v.Cmp(h) > 0 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Equal reports whether a and b hold the same names with equal values.
func Equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		o, ok := b[k]
		if !ok || v.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// String renders l as kube's quota messages do: "name=value,..." sorted.
func String(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, k := range Names(l) {
		v := l[k]
		parts = append(parts, string(k)+"="+v.String())
	}
	return strings.Join(parts, ",")
}

// NamesString renders names as kube does: sorted, comma separated.
func NamesString(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}
