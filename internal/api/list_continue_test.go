package api_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/api"
)

// expiredContinueMsg is kube-apiserver's message for a continue token whose
// revision was compacted away.
const expiredContinueMsg = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

// page GETs one page of a list and decodes it (fails unless 200).
func (s *readServer) page(tb testing.TB, target, cont string) listPage {
	tb.Helper()
	if cont != "" {
		target += "&continue=" + url.QueryEscape(cont)
	}
	code, _, b := s.do(tb, http.MethodGet, target, "", "")
	if code != http.StatusOK {
		tb.Fatalf("GET %s: %d %s", target, code, b)
	}
	var p listPage
	if err := json.Unmarshal(b, &p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// expiredPage GETs a page with an expired token: 410 Expired with kube's
// message, and the inconsistent token (rv -1, the same start key) it
// returns.
func (s *readServer) expiredPage(tb testing.TB, target, cont string) string {
	tb.Helper()
	code, _, b := s.do(tb, http.MethodGet, target+"&continue="+url.QueryEscape(cont), "", "")
	var st struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Continue string `json:"continue"`
		} `json:"metadata"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		tb.Fatalf("%d %s: %v", code, b, err)
	}
	if code != http.StatusGone || st.Kind != "Status" || st.Code != 410 || st.Reason != "Expired" || st.Message != expiredContinueMsg {
		tb.Fatalf("expired token: %d %s", code, b)
	}
	got, want := decodeToken(tb, st.Metadata.Continue), decodeToken(tb, cont)
	if got.RV != -1 || got.Start != want.Start || got.V != "meta.k8s.io/v1" {
		tb.Fatalf("inconsistent token %+v, want rv -1 and start %q", got, want.Start)
	}
	return st.Metadata.Continue
}

type token struct {
	V     string `json:"v"`
	RV    int64  `json:"rv"`
	Start string `json:"start"`
}

func decodeToken(tb testing.TB, s string) token {
	tb.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	var t token
	if err != nil || json.Unmarshal(b, &t) != nil {
		tb.Fatalf("continue token %q: %v %s", s, err, b)
	}
	return t
}

// TestListContinueExpires: a continue token older than ContinueTTL, or
// whose revision the store no longer keeps, is kube's 410 Expired with an
// inconsistent token; that token continues after the same key at the
// current revision (objects created since show up, deleted ones do not),
// with a fresh revision that the following pages keep and a right
// remainingItemCount, as e2e's "API Chunking … compacted away" checks.
func TestListContinueExpires(t *testing.T) {
	var skew atomic.Int64 // how far the server's clock is ahead
	s := newReadServer(t, func(c *api.Config) {
		c.ContinueTTL = time.Minute
		c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	for i := range 10 {
		s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody(fmt.Sprintf("cm-%02d", i)))
	}
	const target = "/api/v1/namespaces/read/configmaps?limit=3"

	t.Run("age", func(t *testing.T) {
		first := s.page(t, target, "")
		if second := s.page(t, target, first.Metadata.Continue); len(second.Items) != 3 || second.Metadata.ResourceVersion != first.Metadata.ResourceVersion {
			t.Fatalf("a fresh token: %+v", second)
		}
		s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody("cm-04a"))
		if code, _, b := s.do(t, http.MethodDelete, "/api/v1/namespaces/read/configmaps/cm-05", "", ""); code != http.StatusOK {
			t.Fatalf("delete: %d %s", code, b)
		}
		skew.Store(int64(time.Minute + 2*time.Second))
		defer skew.Store(0)
		cont := s.expiredPage(t, target, first.Metadata.Continue)

		var names []string
		rv, found := "", 3
		for cont != "" {
			p := s.page(t, target, cont)
			switch {
			case rv == "" && p.Metadata.ResourceVersion == first.Metadata.ResourceVersion:
				t.Fatalf("inconsistent page at the first page's revision %s", rv)
			case rv != "" && p.Metadata.ResourceVersion != rv:
				t.Fatalf("page at revision %s, the first inconsistent one at %s", p.Metadata.ResourceVersion, rv)
			}
			rv = p.Metadata.ResourceVersion
			for _, it := range p.Items {
				names = append(names, it.Metadata.Name)
			}
			found += len(p.Items)
			cont = p.Metadata.Continue
			switch {
			case cont == "" && p.Metadata.RemainingItemCount != nil:
				t.Fatalf("last page with remainingItemCount %d", *p.Metadata.RemainingItemCount)
			case cont != "" && (p.Metadata.RemainingItemCount == nil || int(*p.Metadata.RemainingItemCount)+found != 10):
				t.Fatalf("after %d of 10: remainingItemCount %v", found, p.Metadata.RemainingItemCount)
			}
		}
		if want := "cm-03 cm-04 cm-04a cm-06 cm-07 cm-08 cm-09"; strings.Join(names, " ") != want {
			t.Fatalf("inconsistent walk: %s, want %s", strings.Join(names, " "), want)
		}
	})

	t.Run("store", func(t *testing.T) {
		first := s.page(t, target, "")
		for i := range 20 { // each change retires a view a reader took
			s.create(t, "/api/v1/namespaces/read/configmaps", configMapBody(fmt.Sprintf("late-%02d", i)))
			s.page(t, target, "")
		}
		cont := s.expiredPage(t, target, first.Metadata.Continue)
		if p := s.page(t, target, cont); len(p.Items) != 3 || p.Items[0].Metadata.Name != "cm-03" {
			t.Fatalf("inconsistent page: %+v", p.Items)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		for _, tok := range []string{`{"v":"meta.k8s.io/v1","rv":0,"start":"/cm-01\u0000"}`, `{"v":"meta.k8s.io/v1","rv":-2,"start":"/cm-01\u0000"}`} {
			code, _, b := s.do(t, http.MethodGet, target+"&continue="+base64.RawURLEncoding.EncodeToString([]byte(tok)), "", "")
			if code != http.StatusBadRequest || !strings.Contains(string(b), "invalid continue token: continue key is not valid") {
				t.Fatalf("%s: %d %s", tok, code, b)
			}
		}
		// kube's list option checks: continue takes no resourceVersion
		// (but "0") and no resourceVersionMatch.
		cont := s.page(t, target, "").Metadata.Continue
		for _, c := range []struct {
			query string
			code  int
			msg   string
		}{
			{"&resourceVersion=1", http.StatusBadRequest, "specifying resource version is not allowed when using continue"},
			{"&resourceVersion=1&resourceVersionMatch=NotOlderThan", http.StatusUnprocessableEntity, "resourceVersionMatch is forbidden when continue is provided"},
			{"&resourceVersion=0", http.StatusOK, ""},
		} {
			code, _, b := s.do(t, http.MethodGet, target+c.query+"&continue="+url.QueryEscape(cont), "", "")
			if code != c.code || !strings.Contains(string(b), c.msg) {
				t.Fatalf("%s: %d %s, want %d %s", c.query, code, b, c.code, c.msg)
			}
		}
	})
}
