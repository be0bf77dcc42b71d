package raftstore

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// spliceRV returns a copy of raw whose metadata.resourceVersion is rv. The
// value is replaced where it exists; otherwise it is inserted where the
// object's encoding puts it: in alphabetical position when metadata's keys
// are sorted (custom resources), else after the last of metadata's leading
// keys (name, generateName, namespace, uid), as a Go-struct-ordered
// ObjectMeta has it. raw is not modified.
func spliceRV(raw []byte, rv uint64) []byte {
	var num [20]byte
	val := strconv.AppendUint(num[:0], rv, 10)
	meta := gjson.GetBytes(raw, "metadata")
	if !meta.IsObject() || meta.Index <= 0 || len(meta.Raw) < 2 || meta.Raw[len(meta.Raw)-1] != '}' {
		// no metadata (or a truncated one, which gjson still calls an
		// object: found by FuzzSpliceRV): nothing to stamp
		return append([]byte(nil), raw...)
	}
	// Result.Get reports Index relative to raw (it adds meta.Index itself).
	if cur := meta.Get("resourceVersion"); cur.Exists() {
		at := cur.Index
		out := make([]byte, 0, len(raw)+len(val)+2)
		out = append(out, raw[:at]...)
		out = append(out, '"')
		out = append(out, val...)
		out = append(out, '"')
		return append(out, raw[at+len(cur.Raw):]...)
	}
	after := insertionPoint(meta)
	out := make([]byte, 0, len(raw)+len(val)+22)
	if after < 0 { // first key of metadata
		at := meta.Index + 1
		out = append(out, raw[:at]...)
		out = append(out, `"resourceVersion":"`...)
		out = append(out, val...)
		out = append(out, '"')
		if len(trimSpace(meta.Raw[1:len(meta.Raw)-1])) > 0 {
			out = append(out, ',')
		}
		return append(out, raw[at:]...)
	}
	out = append(out, raw[:after]...)
	out = append(out, `,"resourceVersion":"`...)
	out = append(out, val...)
	out = append(out, '"')
	return append(out, raw[after:]...)
}

// insertionPoint returns the offset in raw just past the metadata value
// after which resourceVersion goes, or -1 for the first position.
func insertionPoint(meta gjson.Result) int {
	sorted, last, afterSorted := true, "", -1
	meta.ForEach(func(k, v gjson.Result) bool {
		if k.Str < last {
			sorted = false
			return false
		}
		last = k.Str
		if k.Str < "resourceVersion" {
			afterSorted = v.Index + len(v.Raw)
		}
		return true
	})
	if sorted && last > "resourceVersion" {
		return afterSorted
	}
	after := -1
	for _, k := range [...]string{"name", "generateName", "namespace", "uid"} {
		if v := meta.Get(k); v.Exists() && v.Index > 0 {
			after = v.Index + len(v.Raw)
		}
	}
	return after
}

func trimSpace(b string) string {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
