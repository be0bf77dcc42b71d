package api

import (
	"github.com/litek8s/litek8s/internal/kv"
)

// PartialObjectMetadata(List) answers (Accept
// application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, the
// metadata-only clients and informers of client-go), built from the raw
// bytes of the stored metadata (kv.Derived.MetaStart/MetaEnd): nothing is
// parsed. Built-in kinds store their metadata in Go struct order, as kube
// encodes ObjectMeta; a custom resource's metadata keeps its stored
// (alphabetical) key order, where kube re-encodes it in struct order.

// appendPartial appends obj as a PartialObjectMetadata of apiVersion
// (meta.k8s.io/v1 or v1beta1).
func appendPartial(b []byte, obj *kv.Object, apiVersion string) []byte {
	b = append(b, `{"kind":"PartialObjectMetadata","apiVersion":"`...)
	b = append(b, apiVersion...)
	b = append(b, `","metadata":`...)
	if obj.MetaEnd > obj.MetaStart {
		b = append(b, obj.Raw[obj.MetaStart:obj.MetaEnd]...)
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
