package api

import (
	"bytes"
	"encoding/binary"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// Protobuf answers (application/vnd.kubernetes.protobuf) for clients that
// accept protobuf only: gets, lists (the kind's List message) and watches
// (length-delimited frames of metav1.WatchEvent whose object is an
// enveloped message), encoded with apimachinery's protobuf serializer
// exactly as kube-apiserver encodes them.
//
// This is the one read path that decodes stored objects: the JSON answer
// (stored bytes, a List or PartialObjectMetadata built from them) is decoded
// into the typed object of k8s.io/api, which is then encoded. Clients that
// also accept JSON get JSON (see negotiate), so kubectl and client-go never
// take this path; the JSON paths stay zero-parse.

// protoMessage is implemented by the generated protobuf types of k8s.io/api
// and k8s.io/apimachinery; custom resources (unstructured) have no
// protobuf form.
type protoMessage interface {
	Marshal() ([]byte, error)
}

// hasProtobuf reports whether res has a protobuf encoding.
func hasProtobuf(r *registry.Resource) bool {
	if r.New == nil {
		return false
	}
	_, ok := r.New().(protoMessage)
	return ok
}

// protobufBody appends the protobuf encoding of a JSON answer: an object
// (list=false) or a List of res, shaped as out says.
func (s *Server) protobufBody(dst, body []byte, res *registry.Resource, out output, list bool) ([]byte, error) {
	obj := protoTarget(res, out, list)
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, obj); err != nil {
		return nil, fmt.Errorf("api: decode %s for a protobuf answer: %w", res.Kind, err)
	}
	return s.appendProtobuf(dst, obj)
}

// protoTarget returns the empty typed object a JSON answer decodes into,
// with its kind set.
func protoTarget(res *registry.Resource, out output, list bool) runtime.Object {
	var obj runtime.Object
	var gvk schema.GroupVersionKind
	meta := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: metav1.GroupName, Version: out.metaVersion, Kind: kind}
	}
	switch {
	case out.shape == shapePartial:
		obj, gvk = &metav1.PartialObjectMetadata{}, meta("PartialObjectMetadata")
	case out.shape == shapePartialList && out.metaVersion == "v1beta1":
		obj, gvk = &metav1beta1.PartialObjectMetadataList{}, meta("PartialObjectMetadataList")
	case out.shape == shapePartialList:
		obj, gvk = &metav1.PartialObjectMetadataList{}, meta("PartialObjectMetadataList")
	case list:
		obj, gvk = res.NewList(), res.GVK()
		gvk.Kind += "List"
	default:
		obj, gvk = res.New(), res.GVK()
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj
}

// appendProtobuf appends obj in kube's protobuf envelope: "k8s\x00" and a
// runtime.Unknown holding its kind and message.
func (s *Server) appendProtobuf(dst []byte, obj runtime.Object) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	if err := s.codecs.proto.Encode(obj, b); err != nil {
		return nil, fmt.Errorf("api: protobuf encode %T: %w", obj, err)
	}
	return b.Bytes(), nil
}

// appendProtoWatchEvent appends one watch frame: the 4-byte big-endian
// length of a metav1.WatchEvent (not enveloped) whose object is the
// enveloped encoding of obj, as kube's protobuf stream serializer and
// length-delimited framer write them.
func (s *Server) appendProtoWatchEvent(dst []byte, typ string, obj runtime.Object) ([]byte, error) {
	inner, err := s.appendProtobuf(nil, obj)
	if err != nil {
		return dst, err
	}
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: inner}}
	n := ev.Size()
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	if _, err := ev.MarshalToSizedBuffer(dst[start:]); err != nil {
		return dst[:start-4], fmt.Errorf("api: protobuf watch event: %w", err)
	}
	return dst, nil
}

// protoWatchObject decodes the JSON object of one watch event (a stored
// object, a PartialObjectMetadata or a bookmark) into its typed form.
func protoWatchObject(objJSON []byte, res *registry.Resource, out output) (runtime.Object, error) {
	obj := protoTarget(res, out, false)
	if err := kjson.UnmarshalCaseSensitivePreserveInts(objJSON, obj); err != nil {
		return nil, fmt.Errorf("api: decode %s for a protobuf watch: %w", res.Kind, err)
	}
	return obj, nil
}
