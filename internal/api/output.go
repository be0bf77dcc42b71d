package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// Media types of answers.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// writeBody answers a get or list whose JSON body is built: as is (the
// zero-parse path), indented, or converted to YAML or protobuf (both parse
// the body; kubectl and client-go never ask for them, see negotiate). list
// tells a List body from an object's.
func (s *Server) writeBody(w http.ResponseWriter, out output, res *registry.Resource, body []byte, list bool) error {
	switch out.format {
	case formatYAML:
		// kube encodes YAML by converting its JSON (sigs.k8s.io/yaml): keys
		// come out sorted.
		y, err := yaml.JSONToYAML(body)
		if err != nil {
			return fmt.Errorf("api: YAML answer: %w", err)
		}
		writeMedia(w, mediaYAML, y, nil)
		return nil
	case formatProtobuf:
		buf := getBuf()
		defer putBuf(buf)
		pb, err := s.protobufBody((*buf)[:0], body, res, out, list)
		if err != nil {
			return err
		}
		*buf = pb
		writeMedia(w, mediaProtobuf, pb, nil)
		return nil
	}
	if out.pretty { // kube's pretty JSON has no trailing newline
		buf := getBuf()
		defer putBuf(buf)
		ind := bytes.NewBuffer((*buf)[:0])
		if err := json.Indent(ind, body, "", "  "); err != nil {
			return fmt.Errorf("api: indent answer: %w", err)
		}
		*buf = ind.Bytes()
		writeMedia(w, mediaJSON, *buf, nil)
		return nil
	}
	writeMedia(w, mediaJSON, body, newline)
	return nil
}

// writeMedia writes a 200 answer of media type mt: body, then tail.
func writeMedia(w http.ResponseWriter, mt string, body, tail []byte) {
	h := w.Header()
	h.Set("Content-Type", mt)
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	if len(tail) > 0 {
		w.Write(tail)
	}
}

// notAcceptable is kube's 406 for a transformation that does not fit the
// answer (PartialObjectMetadata of a list, PartialObjectMetadataList of an
// object). kube names the Go type of its internal object.
func notAcceptable(format string, res *registry.Resource, list bool) error {
	typ := internalTypeName(res)
	if list {
		typ += "List"
	}
	return statusErr(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable, fmt.Sprintf(format, typ), nil)
}

// internalTypeName is the name of res's type inside kube-apiserver:
// "*core.ConfigMap", "*apps.Deployment"; custom resources are
// unstructured.
func internalTypeName(res *registry.Resource) string {
	if !hasProtobuf(res) {
		return "*unstructured.Unstructured"
	}
	pkg, _, _ := strings.Cut(res.Group, ".")
	if pkg == "" {
		pkg = "core"
	}
	return "*" + pkg + "." + res.Kind
}
