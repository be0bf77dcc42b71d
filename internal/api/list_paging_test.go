package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

type listPage struct {
	Metadata struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	} `json:"items"`
}

// walk follows a paginated list to its end and returns every page.
// afterPage is called after each page but the last.
func (s *readServer) walk(tb testing.TB, target string, afterPage func(i int)) []listPage {
	tb.Helper()
	var pages []listPage
	cont := ""
	for {
		t := target
		if cont != "" {
			t += "&continue=" + url.QueryEscape(cont)
		}
		code, _, b := s.do(tb, http.MethodGet, t, "", "")
		if code != http.StatusOK {
			tb.Fatalf("GET %s: %d %s", t, code, b)
		}
		var p listPage
		if err := json.Unmarshal(b, &p); err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, p)
		if cont = p.Metadata.Continue; cont == "" {
			return pages
		}
		if afterPage != nil {
			afterPage(len(pages) - 1)
		}
		if len(pages) > 1000 {
			tb.Fatal("no end to the walk")
		}
	}
}

// TestListPagingRemainingItemCount: every page but the last says how many
// objects come after it (objects written during the walk do not count: the
// walk reads the first page's state), with a selector it says nothing (as
// kube-apiserver), and the pages hold every object exactly once in order.
func TestListPagingRemainingItemCount(t *testing.T) {
	s := newReadServer(t, nil)
	for i := range 23 {
		s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody(fmt.Sprintf("cm-%02d", i)))
	}
	for i := range 5 {
		s.create(t, "/api/v1/namespaces/other/configmaps", configMapBody(fmt.Sprintf("o-%02d", i)))
	}
	cases := []struct {
		target, limit string
		counts        bool
	}{
		{"/api/v1/namespaces/read/configmaps?", "limit=5", true},
		{"/api/v1/configmaps?", "limit=4", true},
		{"/api/v1/namespaces/read/configmaps?labelSelector=app%3Dread", "&limit=5", false},
	}
	for ci, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			total := len(s.walk(t, c.target, nil)[0].Items) // the state the walk starts from
			seen, prev := 0, ""
			// Writes between pages change nothing in the walk.
			pages := s.walk(t, c.target+c.limit, func(i int) {
				s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody(fmt.Sprintf("cm-%02d-late-%d", i, ci)))
			})
			for i, p := range pages {
				for _, it := range p.Items {
					key := it.Metadata.Namespace + "/" + it.Metadata.Name
					if key <= prev {
						t.Fatalf("page %d: %s after %s", i, key, prev)
					}
					prev = key
				}
				seen += len(p.Items)
				switch {
				case p.Metadata.Continue == "":
					if p.Metadata.RemainingItemCount != nil {
						t.Fatalf("last page has remainingItemCount %d", *p.Metadata.RemainingItemCount)
					}
				case !c.counts:
					if p.Metadata.RemainingItemCount != nil {
						t.Fatalf("page %d with a selector has remainingItemCount %d", i, *p.Metadata.RemainingItemCount)
					}
				case p.Metadata.RemainingItemCount == nil:
					t.Fatalf("page %d has no remainingItemCount", i)
				case *p.Metadata.RemainingItemCount != int64(total-seen):
					t.Fatalf("page %d: remainingItemCount %d, want %d", i, *p.Metadata.RemainingItemCount, total-seen)
				}
			}
			if seen != total {
				t.Fatalf("walk saw %d objects, want %d", seen, total)
			}
		})
	}
}

// TestStreamedListIsWhole: a list without a limit is written in chunks as
// it is walked; it decodes whole, as a List and as a Table, with every
// object once and in order.
func TestStreamedListIsWhole(t *testing.T) {
	s := newReadServer(t, nil)
	const n = 150
	pad := strings.Repeat("x", 1500) // 150 objects of ~1.7 KB: several chunks
	for i := range n {
		s.create(t, "/api/v1/namespaces/read/configmaps",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big-`+fmt.Sprintf("%03d", i)+`"},"data":{"pad":"`+pad+`"}}`)
	}
	code, _, b := s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps", "application/json", "")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, b)
	}
	var l listPage
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("list of %d bytes does not decode: %v", len(b), err)
	}
	if len(l.Items) != n || l.Items[0].Metadata.Name != "big-000" || l.Items[n-1].Metadata.Name != "big-149" {
		t.Fatalf("list has %d items (%d bytes)", len(l.Items), len(b))
	}
	code, _, b = s.do(t, http.MethodGet, "/api/v1/namespaces/read/configmaps", tableAccept, "")
	var tbl struct {
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &tbl); code != http.StatusOK || err != nil || len(tbl.Rows) != n {
		t.Fatalf("table: %d, %v, %d rows", code, err, len(tbl.Rows))
	}
}
