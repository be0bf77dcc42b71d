package discovery

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// This file decides, from a request's Accept header, which answer to send.
// It follows kube-apiserver 1.37 (k8s.io/apiserver's negotiation package and
// go-restful's route selection), restricted to what this package produces:
// JSON. See README "Noteworthy facts" 15 and 19.

// mediaRange is one clause of an Accept header.
type mediaRange struct {
	typ, subtype string
	q            float64
	params       map[string]string
}

// parseAccept parses an Accept header like goautoneg.ParseAccept, which
// kube-apiserver uses: clauses without a "/" (other than "*") are dropped, a
// bad q counts as 0, and clauses are ordered by q, highest first, then
// specific types before wildcards, keeping the header's order otherwise.
func parseAccept(header string) []mediaRange {
	var out []mediaRange
	for part := range strings.SplitSeq(header, ",") {
		if m, ok := parseMediaRange(strings.Trim(part, " ")); ok {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, compareRanges)
	return out
}

// compareRanges orders clauses by preference: higher q first, then a
// specific type before "*", then a specific subtype before "*".
func compareRanges(a, b mediaRange) int {
	if c := cmp.Compare(b.q, a.q); c != 0 {
		return c
	}
	if c := cmp.Compare(wildcard(a.typ), wildcard(b.typ)); c != 0 {
		return c
	}
	return cmp.Compare(wildcard(a.subtype), wildcard(b.subtype))
}

func wildcard(s string) int {
	if s == "*" {
		return 1
	}
	return 0
}

func parseMediaRange(part string) (mediaRange, bool) {
	typ, rest, _ := strings.Cut(part, ";")
	m := mediaRange{q: 1}
	t, sub, hasSlash := strings.Cut(typ, "/")
	m.typ, m.subtype = strings.Trim(t, " "), strings.Trim(sub, " ")
	switch {
	case !hasSlash && m.typ == "*":
		m.subtype = "*"
	case !hasSlash, strings.Contains(sub, "/"):
		return mediaRange{}, false
	}
	for p := range strings.SplitSeq(rest, ";") {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.Contains(v, "=") {
			continue
		}
		if k = strings.Trim(k, " "); k == "q" {
			m.q, _ = strconv.ParseFloat(v, 32)
			continue
		}
		if m.params == nil {
			m.params = make(map[string]string)
		}
		m.params[k] = strings.Trim(v, " ")
	}
	return m, true
}

// jsonSpecificity ranks how m matches application/json: 2 exactly, 1 as
// application/*, 0 as */*, -1 not at all.
func (m mediaRange) jsonSpecificity() int {
	switch {
	case m.typ == "application" && m.subtype == "json":
		return 2
	case m.typ == "application" && m.subtype == "*":
		return 1
	case m.typ == "*" && m.subtype == "*":
		return 0
	}
	return -1
}

// jsonRejected reports whether the most specific clause matching JSON has
// q=0 ("not acceptable", RFC 9110), which overrides a wildcard accepting it.
func jsonRejected(ranges []mediaRange) bool {
	best, rejected := -1, false
	for _, m := range ranges {
		if s := m.jsonSpecificity(); s > best {
			best, rejected = s, m.q <= 0
		}
	}
	return rejected
}

// conversion is the object a clause asks the server to convert its answer
// to, from the parameters as, g and v.
type conversion struct{ kind, group, version string }

// aggregatedDiscovery asks for aggregated discovery. v2beta1 is no longer
// served by kube-apiserver 1.37.
func aggregatedDiscovery() conversion {
	return conversion{kind: "APIGroupDiscoveryList", group: "apidiscovery.k8s.io", version: "v2"}
}

// options checks the parameters of a clause as kube-apiserver does. A
// clause with any of as, g, v asks for a conversion, which must be exactly
// target; with target empty it must ask for none. "sv" is never allowed and
// "stream" only as "watch". pretty=1 asks for indented output. Other
// parameters (profile, ...) are ignored.
func (m mediaRange) options(target conversion) (ok, pretty bool) {
	var got conversion
	converts := false
	for k, v := range m.params {
		switch k {
		case "as":
			got.kind, converts = v, true
		case "g":
			got.group, converts = v, true
		case "v":
			got.version, converts = v, true
		case "sv":
			if v != "" {
				return false, false
			}
		case "stream":
			if v != "" && v != "watch" {
				return false, false
			}
		case "pretty":
			pretty = v == "1"
		}
	}
	if target == (conversion{}) {
		return !converts, pretty
	}
	return got == target, pretty
}

// negotiateJSON finds the first clause, in preference order, that accepts
// JSON converted to target (none when target is empty). An empty header
// accepts plain JSON.
func negotiateJSON(header string, target conversion) (ok, pretty bool) {
	if header == "" {
		return target == (conversion{}), false
	}
	ranges := parseAccept(header)
	if jsonRejected(ranges) {
		return false, false
	}
	for _, m := range ranges {
		if m.q <= 0 || m.jsonSpecificity() < 0 {
			continue
		}
		if ok, pretty := m.options(target); ok {
			return true, pretty
		}
	}
	return false, false
}

// wantsAggregated reports whether the request asks for aggregated discovery
// (apidiscovery.k8s.io/v2) as JSON.
func wantsAggregated(header string) (ok, pretty bool) {
	return negotiateJSON(header, aggregatedDiscovery())
}

// acceptsLegacy reports whether the request accepts a plain JSON object.
func acceptsLegacy(header string) (ok, pretty bool) {
	return negotiateJSON(header, conversion{})
}

// routeAccepts is go-restful's route selection, which runs before
// negotiation on the routes kube-apiserver serves through go-restful: some
// clause, ignoring its parameters and q, must name a media type the route
// produces, or */*. An empty header accepts anything.
func routeAccepts(header string) bool {
	if header == "" {
		return true
	}
	for part := range strings.SplitSeq(header, ",") {
		typ, _, _ := strings.Cut(part, ";")
		switch strings.Trim(typ, " ") {
		case "*/*", "application/json", "application/yaml", "application/vnd.kubernetes.protobuf":
			return true
		}
	}
	return false
}

// prettyRequested is kube-apiserver's isPrettyPrint: ?pretty=<bool> decides
// when present, otherwise browsers, curl and wget get indented JSON.
func prettyRequested(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if pp := r.URL.Query().Get("pretty"); pp != "" {
			pretty, _ := strconv.ParseBool(pp)
			return pretty
		}
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}
