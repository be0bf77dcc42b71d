package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/munnerz/goautoneg"

	"github.com/litek8s/litek8s/internal/api/registry"
)

// format is the encoding of an answer.
type format uint8

const (
	formatJSON     format = iota
	formatYAML            // application/yaml: kube's YAML (JSON converted, keys sorted)
	formatProtobuf        // application/vnd.kubernetes.protobuf
)

// shape is what an answer holds.
type shape uint8

const (
	shapeObject      shape = iota // the object, or its List
	shapeTable                    // meta.k8s.io Table
	shapePartial                  // meta.k8s.io PartialObjectMetadata
	shapePartialList              // meta.k8s.io PartialObjectMetadataList
)

// output is the representation negotiated for a read.
type output struct {
	format format
	shape  shape
	// metaVersion is the meta.k8s.io version ("v1" or "v1beta1") of a
	// Table or PartialObjectMetadata(List).
	metaVersion string
	pretty      bool // indented JSON (";pretty=1", ?pretty=true, curl's User-Agent)
}

func (o output) table() bool { return o.shape == shapeTable }

// metaAPIVersion is the apiVersion of a Table or PartialObjectMetadata.
func (o output) metaAPIVersion() string { return "meta.k8s.io/" + o.metaVersion }

// negotiate picks the representation of a read the way kube-apiserver does
// (goautoneg's order: by q, then specific types before wildcards, then as
// listed), with one deliberate difference: when the chosen clause is
// protobuf and a later clause accepts JSON, JSON is answered. kubectl and
// client-go send "application/vnd.kubernetes.protobuf,application/json" (or
// "…, */*"); they decode JSON as well, and JSON is served from the stored
// bytes while protobuf needs the object decoded (see protobuf.go). kube
// answers protobuf there.
func negotiate(r *http.Request, res *registry.Resource) (output, error) {
	accept := r.Header.Get("Accept")
	var out output
	if strings.TrimSpace(accept) != "" {
		clauses := goautoneg.ParseAccept(accept)
		found := false
		for i := range clauses {
			o, ok := acceptable(&clauses[i], res)
			if !ok {
				continue
			}
			out, found = o, true
			if o.format == formatProtobuf {
				for j := i + 1; j < len(clauses); j++ {
					if later, ok := acceptable(&clauses[j], res); ok && later.format == formatJSON {
						out = later
						break
					}
				}
			}
			break
		}
		if !found {
			return output{}, errNotAcceptable
		}
	}
	out.pretty = out.pretty || prettyPrint(r)
	return out, nil
}

// acceptable returns what clause c asks for, if it can be served for res.
func acceptable(c *goautoneg.Accept, res *registry.Resource) (output, bool) {
	var out output
	switch {
	case c.Type == "*" && c.SubType == "*", c.Type == "application" && (c.SubType == "*" || c.SubType == "json"):
		out.format = formatJSON
	case c.Type == "application" && c.SubType == "yaml":
		out.format = formatYAML
	case c.Type == "application" && c.SubType == "vnd.kubernetes.protobuf":
		out.format = formatProtobuf
	default:
		return output{}, false
	}
	as, g, v := c.Params["as"], c.Params["g"], c.Params["v"]
	if as != "" || g != "" || v != "" {
		if g != "meta.k8s.io" || (v != "v1" && v != "v1beta1") {
			return output{}, false
		}
		out.metaVersion = v
		switch as {
		case "Table":
			// kube has no protobuf Tables, and reviews have no table
			// convertor: kube answers 406 for them.
			if out.format == formatProtobuf || res.Review {
				return output{}, false
			}
			out.shape = shapeTable
		case "PartialObjectMetadata":
			out.shape = shapePartial
		case "PartialObjectMetadataList":
			out.shape = shapePartialList
		default:
			return output{}, false
		}
	}
	if s := c.Params["stream"]; s != "" && (s != "watch" || out.format == formatYAML) {
		return output{}, false
	}
	if out.format == formatProtobuf && out.shape == shapeObject && !hasProtobuf(res) {
		return output{}, false // custom resources have no protobuf form
	}
	out.pretty = c.Params["pretty"] == "1"
	return out, true
}

// prettyPrint is kube's deprecated pretty-printing switch: ?pretty=true,
// or a browser's or command-line HTTP tool's User-Agent.
func prettyPrint(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if pp := r.URL.Query().Get("pretty"); pp != "" {
			b, _ := strconv.ParseBool(pp)
			return b
		}
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}
