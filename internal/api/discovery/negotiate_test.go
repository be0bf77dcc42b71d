package discovery

import (
	"net/http/httptest"
	"testing"
)

const (
	acceptV2        = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptV2beta1   = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	acceptDiscovery = acceptV2 + "," + acceptV2beta1 + ",application/json" // kubectl
	acceptTable     = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	acceptProtobuf  = "application/vnd.kubernetes.protobuf,application/json"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		accept                    string
		route, aggregated, legacy bool
		pretty                    bool // of the chosen form
	}{
		{"", true, false, true, false},
		{acceptDiscovery, true, true, true, false},
		{acceptV2, true, true, false, false},
		{acceptV2beta1, true, false, false, false},
		{acceptTable, true, false, true, false},
		{acceptProtobuf, true, false, true, false},
		{"application/json, */*", true, false, true, false},
		{"*/*", true, false, true, false},
		{"*", false, false, true, false}, // go-restful wants "*/*" literally
		{"application/*", false, false, true, false},
		{"application/xml", false, false, false, false},
		{"application/yaml", true, false, false, false},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true, false, true, false}, // a browser
		{"application/json;q=0", true, false, false, false},
		{"application/json;q=0,*/*", true, false, false, false},
		{"application/json;q=0.1,application/json;pretty=1", true, false, true, true},
		{"application/json;pretty=1;" + acceptV2[len("application/json;"):], true, true, false, true},
		{"application/json;stream=watch", true, false, true, false},
		{"application/json;q=bogus", true, false, false, false},
		{" application/json ; q=1 ", true, false, true, false},
		{"application/json/x", false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			if got := routeAccepts(tt.accept); got != tt.route {
				t.Errorf("routeAccepts = %v, want %v", got, tt.route)
			}
			agg, aggPretty := wantsAggregated(tt.accept)
			if agg != tt.aggregated {
				t.Errorf("wantsAggregated = %v, want %v", agg, tt.aggregated)
			}
			legacy, legacyPretty := acceptsLegacy(tt.accept)
			if legacy != tt.legacy {
				t.Errorf("acceptsLegacy = %v, want %v", legacy, tt.legacy)
			}
			pretty := (agg && aggPretty) || (!agg && legacy && legacyPretty)
			if pretty != tt.pretty {
				t.Errorf("pretty = %v, want %v", pretty, tt.pretty)
			}
		})
	}
}

func TestParseAcceptOrder(t *testing.T) {
	got := parseAccept("*/*;q=0.8, application/*, application/yaml;q=0.9, application/json, text/plain;q=0.9")
	want := []string{"application/json", "application/*", "application/yaml", "text/plain", "*/*"}
	if len(got) != len(want) {
		t.Fatalf("got %d clauses, want %d", len(got), len(want))
	}
	for i, m := range got {
		if s := m.typ + "/" + m.subtype; s != want[i] {
			t.Errorf("clause %d = %s, want %s", i, s, want[i])
		}
	}
}

func TestPrettyRequested(t *testing.T) {
	tests := []struct {
		target, ua string
		want       bool
	}{
		{"/apis", "kubectl/v1.32.0", false},
		{"/apis", "curl/8.0", true},
		{"/apis?pretty=1", "kubectl/v1.32.0", true},
		{"/apis?pretty=0", "curl/8.0", false},
		{"/apis?pretty=", "curl/8.0", true},
		{"/apis?pretty=maybe", "curl/8.0", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", tt.target, nil)
		r.Header.Set("User-Agent", tt.ua)
		if got := prettyRequested(r); got != tt.want {
			t.Errorf("prettyRequested(%s, %s) = %v, want %v", tt.target, tt.ua, got, tt.want)
		}
	}
}
