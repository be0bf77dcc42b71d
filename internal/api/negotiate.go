package api

import (
	"mime"
	"strings"
)

// output is the representation a client accepts.
type output struct {
	table bool
	// tableVersion is "v1" or "v1beta1" (meta.k8s.io) for Tables.
	tableVersion string
}

// negotiate picks the first representation of accept we can produce: a
// Table (when allowed) or plain JSON. kubectl's Table Accept lists JSON last
// as the fallback; protobuf-first clients also accept JSON.
func negotiate(accept string, allowTable bool) (output, error) {
	if strings.TrimSpace(accept) == "" {
		return output{}, nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*":
			return output{}, nil
		case "application/json":
			switch params["as"] {
			case "":
				return output{}, nil
			case "Table":
				v := params["v"]
				if allowTable && params["g"] == "meta.k8s.io" && (v == "v1" || v == "v1beta1") {
					return output{table: true, tableVersion: v}, nil
				}
			}
		}
	}
	return output{}, errNotAcceptable
}
