package table

import (
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

var crdColumns = []Column{
	nameColumn,
	{Name: "Scope", Type: "string", Description: "Cluster/Namespaced"},
	{Name: "Versions", Type: "string", Description: "Served versions"},
	{Name: "Created At", Type: "date", Description: descCreationTimestamp},
	{Name: "Group", Type: "string", Priority: 1, Description: "API group"},
	{Name: "Kind", Type: "string", Priority: 1, Description: "CustomResource kind"},
	{Name: "ShortNames", Type: "string", Priority: 1, Description: "Short names"},
	{Name: "Established", Type: "boolean", Priority: 1, Description: "Established status"},
}

// crdCells: the served versions sorted, the storage one marked
// "(storage)"; Created At as an RFC 3339 string; Established from the
// condition.
func crdCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.spec.Get("scope").String())
	var versions []string
	o.spec.Get("versions").ForEach(func(_, v gjson.Result) bool {
		if v.Get("served").Bool() {
			label := v.Get("name").String()
			if v.Get("storage").Bool() {
				label += "(storage)"
			}
			versions = append(versions, label)
		}
		return true
	})
	slices.Sort(versions)
	w.str(strings.Join(versions, ","))
	w.begin()
	w.buf = o.created.UTC().AppendFormat(w.buf, time.RFC3339)
	w.end()
	w.str(o.spec.Get("group").String())
	w.str(o.spec.Get("names.kind").String())
	var short []string
	o.spec.Get("names.shortNames").ForEach(func(_, v gjson.Result) bool {
		short = append(short, v.String())
		return true
	})
	w.str(strings.Join(short, ","))
	established := false
	o.status.Get("conditions").ForEach(func(_, c gjson.Result) bool {
		if c.Get("type").String() == "Established" {
			established = c.Get("status").String() == "True"
			return false
		}
		return true
	})
	w.boolean(established)
}
