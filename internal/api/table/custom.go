package table

import "github.com/litek8s/litek8s/internal/kv"

// NameColumn is the Name column every Table starts with; AgeColumn is the
// Age column (rendered from metadata.creationTimestamp).
func NameColumn() Column { return nameColumn }

// AgeColumn is kube's Age column.
func AgeColumn() Column { return ageColumn }

// NewCustom returns a printer with the given columns whose cells fn
// computes (custom resources: a CRD's additionalPrinterColumns).
func NewCustom(columns []Column, fn func(raw []byte) []kv.Cell) *Printer {
	return &Printer{Columns: columns, custom: fn, defs: encodeColumns(columns)}
}
