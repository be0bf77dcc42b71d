package table

import (
	"slices"

	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labelSet writes a string cell with a label map as kube's
// labels.FormatLabels renders it: "k=v" pairs sorted as strings, joined
// with ",", or "<none>" when empty.
func (w *rowWriter) labelSet(m gjson.Result) {
	var pairs []string
	forEachMember(m, func(k, v gjson.Result) bool {
		pairs = append(pairs, k.String()+"="+v.String())
		return true
	})
	slices.Sort(pairs)
	w.joined(pairs, "<none>")
}

// joined writes a string cell joining items with ",", or def when empty.
func (w *rowWriter) joined(items []string, def string) {
	w.begin()
	for i, s := range items {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.text(s)
	}
	if w.blank() {
		w.text(def)
	}
	w.end()
}

// labelSelector decodes a metav1.LabelSelector (nil for null or absent).
func labelSelector(r gjson.Result) *metav1.LabelSelector {
	if !r.IsObject() {
		return nil
	}
	ls := &metav1.LabelSelector{}
	if ml := r.Get("matchLabels"); ml.IsObject() {
		ls.MatchLabels = make(map[string]string)
		forEachMember(ml, func(k, v gjson.Result) bool {
			ls.MatchLabels[k.String()] = v.String()
			return true
		})
	}
	forEachElem(r.Get("matchExpressions"), func(e gjson.Result) bool {
		req := metav1.LabelSelectorRequirement{
			Key:      e.Get("key").String(),
			Operator: metav1.LabelSelectorOperator(e.Get("operator").String()),
		}
		req.Values = stringArray(e.Get("values"))
		ls.MatchExpressions = append(ls.MatchExpressions, req)
		return true
	})
	return ls
}

// selectorString renders a selector as kube's printDeployment does:
// "<invalid>" when it does not convert, "" when it is null or empty.
func selectorString(r gjson.Result) string {
	s, err := metav1.LabelSelectorAsSelector(labelSelector(r))
	if err != nil {
		return "<invalid>"
	}
	return s.String()
}

// formatSelector renders a selector as metav1.FormatLabelSelector does.
func formatSelector(r gjson.Result) string {
	return metav1.FormatLabelSelector(labelSelector(r))
}
