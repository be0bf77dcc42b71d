package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite README.md's Configuration table from node's flag set")

const (
	tableBegin = "<!-- flags:begin: generated from cmd/node's flags; go test ./cmd/node -run TestREADMEFlagTable -update -->"
	tableEnd   = "<!-- flags:end -->"
)

// cellEscaper keeps a usage string one Markdown table cell: | would end
// the cell and <name> would be read as an HTML tag.
var cellEscaper = strings.NewReplacer("|", `\|`, "<", `\<`)

// flagTable renders node's flags as README's Configuration table: one row
// per flag, in definition order, with its default and usage string.
func flagTable(fs *pflag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | default | |\n|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		def := f.DefValue
		if def == "[]" {
			def = ""
		}
		if def != "" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s |\n", f.Name, def, cellEscaper.Replace(f.Usage))
	})
	return b.String()
}

// README.md's Configuration table is node's flag set: every flag, its
// default and its usage string. -update rewrites the table.
func TestREADMEFlagTable(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, tableBegin+"\n"), strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the lines %q and %q around the Configuration table", tableBegin, tableEnd)
	}
	i += len(tableBegin) + 1
	want := flagTable(flagSet())
	if readme[i:j] == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("README.md's Configuration table rewritten")
		return
	}
	t.Errorf("README.md's Configuration table differs from node's flags; run\n"+
		"\tgo test ./cmd/node -run TestREADMEFlagTable -update\ngot:\n%s\nwant:\n%s", readme[i:j], want)
}

// The table escapes | and < in usage strings, leaves empty defaults empty and
// keeps definition order.
func TestFlagTableRendering(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.String("zeta", "", "a|b <dir>")
	fs.StringSlice("alpha", nil, "list")
	fs.Int("n", 3, "count")
	got := flagTable(fs)
	want := "| flag | default | |\n|---|---|---|\n" +
		"| `--zeta` |  | a\\|b \\<dir> |\n| `--alpha` |  | list |\n| `--n` | `3` | count |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
