package table

import "time"

// defaultCells mirrors the apiserver's default table convertor: the name and
// creationTimestamp as an RFC 3339 string in UTC (zero time included).
func defaultCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.begin()
	w.buf = o.created.UTC().AppendFormat(w.buf, time.RFC3339)
	w.end()
}

// namespaceCells: a missing phase is defaulted to Active, as kube does.
func namespaceCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.strOr(o.status.Get("phase").String(), "Active")
	w.age(o.created)
}

// configMapCells: Data counts the keys of data and binaryData.
func configMapCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.num(countMembers(o.data) + countMembers(o.binaryData))
	w.age(o.created)
}

// secretCells: a missing type is defaulted to Opaque, as kube does.
func secretCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.strOr(o.typ.String(), "Opaque")
	w.num(countMembers(o.data))
	w.age(o.created)
}

func serviceAccountCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.age(o.created)
}

func leaseCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.spec.Get("holderIdentity").String())
	w.age(o.created)
}
