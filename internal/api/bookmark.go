package api

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// initialEventsEnd is the annotation of the bookmark that ends a
// watch-list's initial events.
const initialEventsEnd = "k8s.io/initial-events-end"

// bookmarkObject is the object of a BOOKMARK event at revision rev: kube's
// empty object of res's kind with only metadata.resourceVersion (and the
// initial-events-end annotation) set, encoded as kube encodes it, so that
// a Pod bookmark carries `"spec":{"containers":null},"status":{}` like
// kube's. It is built once per bookmark (every minute or so), never per
// event.
func bookmarkObject(res *registry.Resource, rev uint64, initialEnd bool) *kv.Object {
	raw := encodeBookmark(res, rev, initialEnd)
	obj := &kv.Object{Raw: raw, RV: rev}
	if m := gjson.GetBytes(raw, "metadata"); m.Index > 0 {
		obj.MetaStart, obj.MetaEnd = int32(m.Index), int32(m.Index+len(m.Raw))
	}
	return obj
}

func encodeBookmark(res *registry.Resource, rev uint64, initialEnd bool) []byte {
	rv := strconv.FormatUint(rev, 10)
	if res.New != nil {
		o := res.New()
		if acc, err := meta.Accessor(o); err == nil {
			o.GetObjectKind().SetGroupVersionKind(res.GVK())
			acc.SetResourceVersion(rv)
			if initialEnd {
				acc.SetAnnotations(map[string]string{initialEventsEnd: "true"})
			}
			if b, err := json.Marshal(o); err == nil {
				return bytes.TrimSpace(b)
			}
		}
	}
	b := append([]byte(`{"kind":"`), res.Kind...)
	b = append(b, `","apiVersion":"`...)
	b = append(b, res.GroupVersion()...)
	b = append(b, `","metadata":{"resourceVersion":"`...)
	b = append(b, rv...)
	if initialEnd {
		return append(b, `","annotations":{"k8s.io/initial-events-end":"true"}}}`...)
	}
	return append(b, `"}}`...)
}
