package table

import (
	"time"

	"github.com/tidwall/gjson"
)

// object holds what the printers read of one object, found in one pass over
// its top level and one over its metadata: a gjson Get from the top would
// skip metadata (and its managedFields) again for every field.
type object struct {
	name     string
	created  time.Time    // metadata.creationTimestamp
	deleting bool         // metadata.deletionTimestamp is set
	labels   gjson.Result // metadata.labels

	annotations, ownerReferences gjson.Result // metadata.annotations, metadata.ownerReferences

	spec, status gjson.Result

	typ              gjson.Result // Secret and Event type
	data, binaryData gjson.Result // ConfigMap, Secret
	event            eventMembers // the top-level members of a core/v1 Event
	rest             []member     // every other top-level member, in order
}

// member is one top-level member of an object that the fields above do not
// hold (Endpoints subsets, a RoleBinding's roleRef, …).
type member struct {
	key string
	val gjson.Result
}

// get returns the top-level member key from rest (an empty Result when
// absent).
func (o *object) get(key string) gjson.Result {
	for _, m := range o.rest {
		if m.key == key {
			return m.val
		}
	}
	return gjson.Result{}
}

// eventMembers are the top-level members of a core/v1 Event.
type eventMembers struct {
	involvedObject, reason, message, source, count, series gjson.Result
	firstTimestamp, lastTimestamp, eventTime               gjson.Result
	reportingComponent, reportingInstance                  gjson.Result
}

// read fills o, which must be clear, from doc.
func (o *object) read(doc gjson.Result) {
	forEachMember(doc, func(k, v gjson.Result) bool {
		switch k.Str {
		case "metadata":
			o.readMeta(v)
		case "spec":
			o.spec = v
		case "status":
			o.status = v
		case "type":
			o.typ = v
		case "data":
			o.data = v
		case "binaryData":
			o.binaryData = v
		case "kind", "apiVersion":
		default:
			if !o.event.set(k.Str, v) {
				o.rest = append(o.rest, member{k.Str, v})
			}
		}
		return true
	})
}

// clear empties o, keeping the capacity of rest.
func (o *object) clear() {
	rest := o.rest
	clear(rest)
	*o = object{rest: rest[:0]}
}

func (o *object) readMeta(meta gjson.Result) {
	forEachMember(meta, func(k, v gjson.Result) bool {
		switch k.Str {
		case "name":
			o.name = v.String()
		case "creationTimestamp":
			o.created = parseTime(v)
		case "deletionTimestamp":
			o.deleting = v.Type == gjson.String
		case "labels":
			o.labels = v
		case "annotations":
			o.annotations = v
		case "ownerReferences":
			o.ownerReferences = v
		}
		return true
	})
}

// set keeps v if key is a member of a core/v1 Event, and reports whether
// it is.
func (e *eventMembers) set(key string, v gjson.Result) bool {
	switch key {
	case "involvedObject":
		e.involvedObject = v
	case "reason":
		e.reason = v
	case "message":
		e.message = v
	case "source":
		e.source = v
	case "count":
		e.count = v
	case "series":
		e.series = v
	case "firstTimestamp":
		e.firstTimestamp = v
	case "lastTimestamp":
		e.lastTimestamp = v
	case "eventTime":
		e.eventTime = v
	case "reportingComponent":
		e.reportingComponent = v
	case "reportingInstance":
		e.reportingInstance = v
	default:
		return false
	}
	return true
}

// forEachMember calls fn for each member of a JSON object (and for nothing
// else: gjson's ForEach would pass a scalar itself).
func forEachMember(obj gjson.Result, fn func(k, v gjson.Result) bool) {
	if obj.IsObject() {
		obj.ForEach(fn)
	}
}

// forEachElem calls fn for each element of a JSON array.
func forEachElem(arr gjson.Result, fn func(v gjson.Result) bool) {
	if arr.IsArray() {
		arr.ForEach(func(_, v gjson.Result) bool { return fn(v) })
	}
}

// parseTime decodes a metav1.Time or MicroTime; null, absent or invalid
// values give the zero time (rendered "<unknown>").
func parseTime(r gjson.Result) time.Time {
	if r.Type != gjson.String {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, r.Str)
	if err != nil {
		return time.Time{}
	}
	return t
}

// memberOf returns the member key of a JSON object (keys such as
// annotation names hold dots, which a gjson path would split at).
func memberOf(obj gjson.Result, key string) gjson.Result {
	var out gjson.Result
	forEachMember(obj, func(k, v gjson.Result) bool {
		if k.Str == key {
			out = v
			return false
		}
		return true
	})
	return out
}

// countMembers returns the number of members of a JSON object.
func countMembers(obj gjson.Result) int64 {
	var n int64
	forEachMember(obj, func(_, _ gjson.Result) bool { n++; return true })
	return n
}

// countElems returns the number of elements of a JSON array.
func countElems(arr gjson.Result) int64 {
	var n int64
	forEachElem(arr, func(gjson.Result) bool { n++; return true })
	return n
}

// stringArray returns the elements of a JSON array as strings.
func stringArray(arr gjson.Result) []string {
	var out []string
	forEachElem(arr, func(v gjson.Result) bool {
		out = append(out, v.String())
		return true
	})
	return out
}
