package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// Output formats (-o): every command prints the same value as JSON or
// YAML for scripts, and as a table or text for people.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

var outputFormats = []string{outputTable, outputJSON, outputYAML}

func validOutput(f string) bool { return slices.Contains(outputFormats, f) }

// print writes v in the format -o names; table writes the human form.
func (o *options) print(w io.Writer, v any, table func(io.Writer) error) error {
	return writeOutput(w, o.output(), v, table)
}

// writeOutput writes v as JSON or YAML, or calls table.
func writeOutput(w io.Writer, format string, v any, table func(io.Writer) error) error {
	switch format {
	case outputJSON:
		return writeJSON(w, v)
	case outputYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return table(w)
}

// writeJSON prints v indented, for scripts (-o json).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeTable prints a header and rows in aligned columns.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
