package api

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"

	"github.com/litek8s/litek8s/internal/kv"
)

// PartialObjectMetadata(List) answers (Accept
// application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, the
// metadata-only clients and informers of client-go), built from the raw
// bytes of the stored metadata (kv.Derived.MetaStart/MetaEnd): nothing is
// parsed for built-in kinds, whose metadata is stored in Go struct order,
// as kube encodes ObjectMeta. A custom resource's metadata is stored with
// its keys sorted (kube serializes custom resources so) while kube's
// PartialObjectMetadata is the typed ObjectMeta: for custom resources only,
// the metadata is decoded and encoded again.

// appendPartial appends obj as a PartialObjectMetadata of apiVersion
// (meta.k8s.io/v1 or v1beta1).
func appendPartial(b []byte, obj *kv.Object, apiVersion string) []byte {
	b = append(b, `{"kind":"PartialObjectMetadata","apiVersion":"`...)
	b = append(b, apiVersion...)
	b = append(b, `","metadata":`...)
	if obj.MetaEnd > obj.MetaStart {
		meta := obj.Raw[obj.MetaStart:obj.MetaEnd]
		if obj.BodyStart == 0 { // not {"kind":…,"apiVersion":…,…}: a custom resource
			meta = typedMetadata(meta)
		}
		b = append(b, meta...)
	} else {
		b = append(b, "{}"...)
	}
	return append(b, '}')
}

// appendPartialListHeader opens a PartialObjectMetadataList up to its items.
func appendPartialListHeader(b []byte, apiVersion string, rev uint64, cont string, remaining int64) []byte {
	b = append(b, `{"kind":"PartialObjectMetadataList","apiVersion":"`...)
	b = append(b, apiVersion...)
	b = appendListMeta(append(b, `","metadata":`...), rev, cont, remaining)
	return append(b, `,"items":[`...)
}

// typedMetadata re-encodes a custom resource's metadata as kube encodes
// metav1.ObjectMeta (struct order), or returns it as is if it does not
// decode.
func typedMetadata(meta []byte) []byte {
	var m metav1.ObjectMeta
	if err := kjson.UnmarshalCaseSensitivePreserveInts(meta, &m); err != nil {
		return meta
	}
	out, err := json.Marshal(&m)
	if err != nil {
		return meta
	}
	return out
}
