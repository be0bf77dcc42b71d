package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/architecture.md lives in the repository and covers what the README
// sends readers there for: layout, the write path, the read path,
// controllers and membership; every repository path it names in code
// spans exists; and no document points outside the repository
// (../shared).
func TestArchitectureDoc(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, h := range []string{"## Layout", "## The write path", "## The read path", "## Controllers", "## Membership"} {
		if !strings.Contains(doc, "\n"+h) {
			t.Errorf("docs/architecture.md has no section %q", h)
		}
	}
	pathRe := regexp.MustCompile("`((?:cmd|internal|test|bench|charts|hack|docs)/[A-Za-z0-9_./-]+)")
	for _, m := range pathRe.FindAllStringSubmatch(doc, -1) {
		p := strings.TrimRight(m[1], "./")
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist", p)
		}
	}
	var docs []string
	for _, glob := range []string{"README.md", "docs/*.md", "bench/*.md", "charts/litek8s/*.md", "test/*/README.md"} {
		m, _ := filepath.Glob(filepath.Join(root, glob))
		docs = append(docs, m...)
	}
	for _, f := range docs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "../shared") {
			t.Errorf("%s refers to ../shared, outside the repository", f)
		}
	}
}
